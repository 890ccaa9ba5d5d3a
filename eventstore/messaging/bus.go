package messaging

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v3/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	wmetrics "github.com/ThreeDotsLabs/watermill/components/metrics"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/wait"
)

// Options configures the buses.
type Options struct {
	// Backend is "postgres" (commands over watermill-sql, shared by every
	// omega process on the database) or "sqlite" (commands in-process).
	Backend string
	DB      *sql.DB
	Log     Log
	// Registry upcasts old event payloads before handlers see them.
	Registry *domain.Registry
	Logger   *slog.Logger
	// Announcer, on PostgreSQL, wakes the command subscribers of every
	// process when a command is published (LISTEN/NOTIFY) instead of
	// leaving them to their next poll; nil keeps polling only.
	Announcer Announcer
	// CommandPoll is how often an idle command subscriber queries anyway
	// (default 1 s; with an Announcer, which wakes it, only a safety net
	// for a lost announcement: default 5 s).
	CommandPoll time.Duration
	// MaxRetries and InitialInterval tune the retry middleware.
	MaxRetries      int
	InitialInterval time.Duration
	// Metrics, when set, receives watermill's router handler metrics.
	Metrics prometheus.Registerer
}

// Buses is the CQRS wiring: one router, a command bus and processors for
// commands and events.
type Buses struct {
	Router     *message.Router
	CommandBus *cqrs.CommandBus
	Commands   *cqrs.CommandProcessor
	Events     *cqrs.EventGroupProcessor
	closers    []func() error
	store      eventstore.Store
	backend    string
	db         *sql.DB
}

// Marshaler names messages by their EventType or CommandName method, so
// names match the type names stored in the log.
var Marshaler = cqrs.JSONMarshaler{GenerateName: messageName}

func messageName(v any) string {
	switch m := v.(type) {
	case domain.Payload:
		return m.EventType()
	case interface{ CommandName() string }:
		return m.CommandName()
	}
	// Handlers register pointer types; look through them.
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		if m, ok := reflect.New(t.Elem()).Elem().Interface().(domain.Payload); ok {
			return m.EventType()
		}
		if m, ok := reflect.New(t.Elem()).Elem().Interface().(interface{ CommandName() string }); ok {
			return m.CommandName()
		}
	}
	return cqrs.StructName(v)
}

// New builds the router with recoverer, retry with exponential backoff
// and a poison queue, the command bus and the processors. Register
// handlers on Commands and Events, then run Router.
func New(opts Options) (*Buses, error) {
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 5
	}
	if opts.InitialInterval == 0 {
		opts.InitialInterval = 200 * time.Millisecond
	}
	// Watermill narrates every handler start at info; that belongs in debug.
	wlog := watermill.NewSlogLoggerWithLevelMapping(opts.Logger, map[slog.Level]slog.Level{slog.LevelInfo: slog.LevelDebug})
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, wlog)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	poison, err := middleware.PoisonQueueWithFilter(NewPoisonPublisher(opts.Log), "poison", failedForGood)
	if err != nil {
		return nil, fmt.Errorf("poison queue: %w", err)
	}
	// Outermost first: a message reaches the poison queue only after the
	// retries are spent and unless the process was stopping; panics become
	// errors the retry can see.
	router.AddMiddleware(
		poison,
		markStopping,
		middleware.Retry{
			MaxRetries:      opts.MaxRetries,
			InitialInterval: opts.InitialInterval,
			MaxInterval:     30 * time.Second,
			Multiplier:      2,
			Logger:          wlog,
		}.Middleware,
		middleware.Recoverer,
	)
	if opts.Metrics != nil {
		// Handler timings and outcomes, and publish timings. Not
		// AddPrometheusRouterMetrics: its subscriber decorator only counts
		// messages the handler metrics count too, and runs two goroutines
		// per subscription, one subscription per command handler: 120
		// goroutines of an idle process.
		b := wmetrics.NewPrometheusMetricsBuilder(opts.Metrics, "omega", "router")
		router.AddPublisherDecorators(b.DecoratePublisher)
		router.AddMiddleware(b.NewRouterMiddleware().Middleware)
	}
	b := &Buses{Router: router, store: opts.Log, backend: opts.Backend, db: opts.DB}

	pub, sub, stop, err := commandTransport(opts, wlog)
	if err != nil {
		return nil, err
	}
	b.closers = append(b.closers, stop)
	b.closers = append(b.closers, pub.Close)
	b.CommandBus, err = cqrs.NewCommandBusWithConfig(pub, cqrs.CommandBusConfig{
		GeneratePublishTopic: func(p cqrs.CommandBusGeneratePublishTopicParams) (string, error) {
			return commandTopic(p.CommandName), nil
		},
		Marshaler: Marshaler,
		Logger:    wlog,
	})
	if err != nil {
		return nil, fmt.Errorf("command bus: %w", err)
	}
	b.Commands, err = cqrs.NewCommandProcessorWithConfig(router, cqrs.CommandProcessorConfig{
		GenerateSubscribeTopic: func(p cqrs.CommandProcessorGenerateSubscribeTopicParams) (string, error) {
			return commandTopic(p.CommandName), nil
		},
		SubscriberConstructor: func(cqrs.CommandProcessorSubscriberConstructorParams) (message.Subscriber, error) {
			return sub, nil
		},
		Marshaler: Marshaler,
		Logger:    wlog,
	})
	if err != nil {
		return nil, fmt.Errorf("command processor: %w", err)
	}

	events := NewStoreSubscriber(opts.Log, opts.Registry, opts.Logger)
	b.closers = append(b.closers, events.Close)
	b.Events, err = cqrs.NewEventGroupProcessorWithConfig(router, cqrs.EventGroupProcessorConfig{
		GenerateSubscribeTopic: func(p cqrs.EventGroupProcessorGenerateSubscribeTopicParams) (string, error) {
			return "group:" + p.EventGroupName, nil
		},
		SubscriberConstructor: func(cqrs.EventGroupProcessorSubscriberConstructorParams) (message.Subscriber, error) {
			return events, nil
		},
		AckOnUnknownEvent: true,
		Marshaler:         Marshaler,
		Logger:            wlog,
	})
	if err != nil {
		return nil, fmt.Errorf("event processor: %w", err)
	}
	return b, nil
}

// commandTransport picks where commands travel: a table per command
// through watermill-sql on PostgreSQL (durable, shared by processes, one
// consumer group so each command runs once), an in-process channel on the
// single-process SQLite backend.
func commandTransport(opts Options, wlog watermill.LoggerAdapter) (message.Publisher, message.Subscriber, func() error, error) {
	if opts.Backend == "postgres" {
		return sqlCommandTransport(opts, wlog)
	}
	// Blocking until the handler acks keeps commands in the order they were
	// sent (GoChannel otherwise hands them over from racing goroutines) and
	// lets a sender know its command ran. Start the router before sending:
	// a command sent with no subscriber is dropped.
	ch := gochannel.NewGoChannel(gochannel.Config{BlockPublishUntilSubscriberAck: true}, wlog)
	return ch, ch, func() error { return nil }, nil
}

// announcedCommandPoll is the idle poll of a subscriber that announcements
// wake (and a reconnected listener, which may have missed one): only a
// safety net for an announcement that failed to send, so it is long; every
// process polls every topic, and at a few seconds the polls of a few
// processes were a tenth of a transaction per turn. The idle wait ends
// when the subscriber closes, so it does not delay a stop.
const announcedCommandPoll = 30 * time.Second

// sqlCommandTransport is watermill-sql on PostgreSQL. Commands are rare: a
// poll per topic every 100 ms was a steady load of empty transactions, so
// an idle subscriber polls every CommandPoll and, with an Announcer, is
// woken by LISTEN/NOTIFY when a command is published.
func sqlCommandTransport(opts Options, wlog watermill.LoggerAdapter) (message.Publisher, message.Subscriber, func() error, error) {
	poll := opts.CommandPoll
	switch {
	case poll > 0:
	case opts.Announcer != nil:
		// Every process polls every topic: at 1 s the polls of a few
		// processes cost PostgreSQL more CPU than their turns' reads.
		poll = announcedCommandPoll
	default:
		poll = time.Second
	}
	var pub message.Publisher
	pub, err := wsql.NewPublisher(opts.DB, wsql.PublisherConfig{SchemaAdapter: wsql.DefaultPostgreSQLSchema{}}, wlog)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("command publisher: %w", err)
	}
	var backoff wsql.BackoffManager = quietOnStop{wsql.NewDefaultBackoffManager(poll, time.Second)}
	stop, closing, ended := func() error { return nil }, func() {}, func() {}
	if opts.Announcer != nil {
		ctx, cancel := context.WithCancel(context.Background())
		wake := newWakeup()
		go followAnnouncements(ctx, opts.Announcer, wake)
		backoff = wakeOnAnnounce{next: backoff, wake: wake, poll: poll, done: ctx.Done()}
		pub = announcingPublisher{Publisher: pub, announcer: opts.Announcer, logger: opts.Logger}
		stop = func() error { cancel(); return nil }
		// A subscriber waiting in the backoff for its next poll notices
		// its close, or the end of its subscription's context, only when
		// the wait ends.
		closing, ended = cancel, wake.fire
	}
	sub, err := wsql.NewSubscriber(opts.DB, wsql.SubscriberConfig{
		ConsumerGroup:  "omega",
		SchemaAdapter:  wsql.DefaultPostgreSQLSchema{},
		OffsetsAdapter: wsql.DefaultPostgreSQLOffsetsAdapter{},
		BackoffManager: backoff,
	}, stopQuiet{wlog})
	if err != nil {
		_ = stop()
		return nil, nil, nil, fmt.Errorf("command subscriber: %w", err)
	}
	return pub, &closeOnce{Subscriber: retrySubscribe{Subscriber: sub, logger: opts.Logger, ended: ended}, closing: closing}, stop, nil
}

// Bounds of the pause before a failed subscription is tried again.
const (
	subscribeRetryMin = 100 * time.Millisecond
	subscribeRetryMax = 5 * time.Second
)

// retrySubscribe tries a subscription again, with a capped backoff, when
// the database fails it: the router stops, and the process with it, on
// the first subscription it cannot make, and a database that restarts
// or refuses connections for a while must not stop a process.
type retrySubscribe struct {
	message.Subscriber
	logger *slog.Logger
	ended  func() // called when a subscription's context ends; may be nil
}

func (r retrySubscribe) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	pause := subscribeRetryMin
	for {
		out, err := r.Subscriber.Subscribe(ctx, topic)
		if err == nil && r.ended != nil {
			context.AfterFunc(ctx, r.ended)
		}
		if err == nil || ctx.Err() != nil || errors.Is(err, wsql.ErrSubscriberClosed) {
			return out, err
		}
		r.logger.Warn("command subscription failed; retrying", "topic", topic, "retry_in", pause, "err", err)
		if werr := wait.Sleep(ctx, pause); werr != nil {
			return nil, err
		}
		pause = min(pause*2, subscribeRetryMax)
	}
}

// SubscribeInitialize forwards to the subscriber.
func (r retrySubscribe) SubscribeInitialize(topic string) error {
	if i, ok := r.Subscriber.(message.SubscribeInitializer); ok {
		return i.SubscribeInitialize(topic)
	}
	return nil
}

// closeOnce lets every router handler close the subscriber they share:
// the router closes a handler's subscriber when the handler stops, so a
// shared one is closed once per command handler, concurrently, and
// watermill-sql's Close is not safe for that (it closes a channel after
// an unsynchronized check: "close of closed channel").
type closeOnce struct {
	message.Subscriber
	closing func() // ends the waits that would hold Close back; may be nil
	once    sync.Once
	err     error
}

func (c *closeOnce) Close() error {
	c.once.Do(func() {
		if c.closing != nil {
			c.closing()
		}
		c.err = c.Subscriber.Close()
	})
	return c.err
}

// SubscribeInitialize forwards to the subscriber, which creates a topic's
// tables on first use.
func (c *closeOnce) SubscribeInitialize(topic string) error {
	if i, ok := c.Subscriber.(message.SubscribeInitializer); ok {
		return i.SubscribeInitialize(topic)
	}
	return nil
}

// AddCommandHandlers registers command handlers, each recording the
// outcome of a command sent with an id (see Send and Wait). On PostgreSQL
// it first creates their topics' tables under an advisory lock:
// watermill-sql's own lazy CREATE TABLE IF NOT EXISTS fails when two
// processes start at once.
func (b *Buses) AddCommandHandlers(ctx context.Context, hs ...cqrs.CommandHandler) error {
	wrapped := make([]cqrs.CommandHandler, len(hs))
	for i, h := range hs {
		wrapped[i] = recordedHandler{CommandHandler: h, store: b.store}
	}
	hs = wrapped
	if b.backend == "postgres" {
		topics := make([]string, len(hs))
		for i, h := range hs {
			topics[i] = commandTopic(Marshaler.Name(h.NewCommand()))
		}
		if err := prepareTopics(ctx, b.db, topics); err != nil {
			return err
		}
	}
	if err := b.Commands.AddHandlers(hs...); err != nil {
		return fmt.Errorf("register command handlers: %w", err)
	}
	return nil
}

// topicsLock is the advisory lock key serializing topic creation.
const topicsLock = 0x6f6d656761 // "omega"

func prepareTopics(ctx context.Context, db *sql.DB, topics []string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("prepare command topics: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", topicsLock); err != nil {
		return fmt.Errorf("prepare command topics: lock: %w", err)
	}
	defer func() {
		// A failed unlock is released anyway when the connection closes.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", topicsLock)
	}()
	for _, topic := range topics {
		qs := append(wsql.DefaultPostgreSQLSchema{}.SchemaInitializingQueries(topic), wsql.DefaultPostgreSQLOffsetsAdapter{}.SchemaInitializingQueries(topic)...)
		for _, q := range qs {
			if _, err := conn.ExecContext(ctx, q.Query, q.Args...); err != nil {
				return fmt.Errorf("prepare command topic %s: %w", topic, err)
			}
		}
	}
	return nil
}

func commandTopic(name string) string { return "omega_commands_" + name }

// Close releases the buses' publishers and subscribers; call it after the
// router has stopped.
func (b *Buses) Close() error {
	var first error
	for _, c := range b.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
