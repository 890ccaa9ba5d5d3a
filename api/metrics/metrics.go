// Package metrics exposes omega's Prometheus metrics and its health
// probes. Turn and provider metrics are read from the event log as it
// grows (so they count what was recorded, whoever recorded it); gauges of
// state are measured at scrape time.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// State is what the gauges and the readiness probe measure
// (engine.Engine).
type State interface {
	Ping(ctx context.Context) error
	Lag(ctx context.Context) (engine.Lag, error)
	OpenTurns(ctx context.Context) (int64, error)
	PoisonedCount(ctx context.Context) (int64, error)
}

// Channels reports the channels that cannot receive now, "name: state"
// (app.Runtime).
type Channels interface {
	UnhealthyChannels() []string
}

// Metrics holds omega's collectors.
type Metrics struct {
	registry *prometheus.Registry
	state    State
	decoder  *domain.Registry
	logger   *slog.Logger
	// ReadyLag is how far projections may trail the log and still be
	// ready.
	ReadyLag time.Duration
	// SampleEvery bounds how often a scrape measures the state gauges.
	SampleEvery time.Duration
	// Channels, when set, makes /readyz answer not ready while a channel
	// cannot receive.
	Channels Channels

	turns         *prometheus.CounterVec
	turnLatency   *prometheus.HistogramVec
	providerCalls *prometheus.HistogramVec
	callsBy       *prometheus.CounterVec
	providerErrs  *prometheus.CounterVec
	tokens        *prometheus.CounterVec
	cost          *prometheus.CounterVec
	// callEvents are the event types that record a provider call.
	callEvents    map[string]bool
	appendLatency prometheus.Histogram
	lateness      prometheus.Histogram
	channelUp     *prometheus.GaugeVec
	channelDowns  *prometheus.CounterVec
	refused       *prometheus.CounterVec

	mu       sync.Mutex
	sampled  time.Time
	snapshot gauges
}

type gauges struct {
	lag                        engine.Lag
	open, poisoned             int64
	lagErr, openErr, poisonErr error
}

// New returns the metrics of one omega process.
func New(state State, decoder *domain.Registry, logger *slog.Logger) (*Metrics, error) {
	if state == nil || decoder == nil {
		return nil, errors.New("metrics: state and event registry are required")
	}
	if logger == nil {
		logger = slog.Default()
	}
	m := &Metrics{
		registry: prometheus.NewRegistry(), state: state, decoder: decoder, logger: logger, ReadyLag: time.Minute, SampleEvery: time.Second,
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omega_turns_total",
			Help: "Completed turns by status (ok, command, denied, error, suppressed, undelivered) and channel."}, []string{"status", "channel"}),
		turnLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "omega_turn_duration_seconds",
			Help: "Time from a message's arrival to its turn's completion.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 14)}, []string{"channel"}),
		providerCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "omega_provider_call_duration_seconds",
			Help: "Provider call latency by outcome (ok, error).", Buckets: prometheus.ExponentialBuckets(0.1, 2, 14)}, []string{"outcome"}),
		callsBy: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omega_provider_calls_total",
			Help: "Provider calls by purpose (turn, plan_step, classifier, heartbeat, summary, facts, self_heal, build) and outcome (ok, error)."},
			[]string{"purpose", "outcome"}),
		providerErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omega_provider_errors_total",
			Help: "Failed provider calls by error class."}, []string{"provider", "class"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omega_provider_tokens_total",
			Help: "Tokens as providers reported them, by kind (input, output, cache_read, cache_write) and call purpose."}, []string{"kind", "purpose"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omega_provider_cost_usd_total",
			Help: "Cost in USD as providers reported it (Claude Code only), by call purpose."}, []string{"purpose"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omega_budget_refused_total",
			Help: "Provider calls not made, by purpose and reason (limit: a spending limit was spent; runaway: the runaway guard paused the loop)."},
			[]string{"purpose", "reason"}),
		callEvents: map[string]bool{},
		appendLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "omega_event_append_duration_seconds",
			Help: "Latency of appends to the event log by this process.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}),
		lateness: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "omega_scheduler_lateness_seconds",
			Help: "How late due work fired after its due time.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)}),
		channelUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "omega_channel_up",
			Help: "Whether a channel receives (1) or not (0), as its last recorded health change says."}, []string{"channel"}),
		channelDowns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "omega_channel_failures_total",
			Help: "Times a channel stopped receiving, by state (down: the platform failed requests; stalled: a receive went unanswered)."}, []string{"channel", "state"}),
	}
	for _, t := range events.ProviderCallTypes() {
		m.callEvents[t] = true
	}
	m.registry.MustRegister(m.turns, m.turnLatency, m.providerCalls, m.callsBy, m.providerErrs, m.tokens, m.cost, m.appendLatency, m.lateness,
		m.channelUp, m.channelDowns, m.refused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gauge := func(name, help string, read func(gauges) float64) {
		m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			return read(m.gauges())
		}))
	}
	gauge("omega_projection_lag_events", "Events the slowest projection has not applied yet.", func(g gauges) float64 { return float64(g.lag.Events) })
	gauge("omega_projection_lag_seconds", "Age of the oldest event the slowest projection has not applied.", func(g gauges) float64 { return g.lag.Age.Seconds() })
	gauge("omega_open_turns", "Turns received and not yet completed.", func(g gauges) float64 { return float64(g.open) })
	gauge("omega_poison_queue_size", "Messages and events given up on, recorded in the poison streams.", func(g gauges) float64 { return float64(g.poisoned) })
	return m, nil
}

// Registry is where further collectors (the router's) register.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// gauges measures the state at most once per SampleEvery, so one scrape's
// gauges cost one round of queries.
func (m *Metrics) gauges() gauges {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.sampled) < m.SampleEvery {
		return m.snapshot
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var g gauges
	g.lag, g.lagErr = m.state.Lag(ctx)
	g.open, g.openErr = m.state.OpenTurns(ctx)
	g.poisoned, g.poisonErr = m.state.PoisonedCount(ctx)
	if err := errors.Join(g.lagErr, g.openErr, g.poisonErr); err != nil {
		m.logger.Warn("metrics: could not measure state", "err", err)
	}
	m.sampled, m.snapshot = time.Now(), g
	return g
}

// ObserveAppend records one append's latency.
func (m *Metrics) ObserveAppend(d time.Duration) { m.appendLatency.Observe(d.Seconds()) }

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(m.logger.Handler(), slog.LevelWarn)})
}

// Follow counts what the log records after position after (normally its
// head at start-up), until ctx ends. An event it cannot decode is logged
// and skipped.
func (m *Metrics) Follow(ctx context.Context, store eventstore.Store, after int64) error {
	err := eventstore.Follow(ctx, store, after, eventstore.FollowOptions{PollInterval: time.Second, Name: "metrics", Logger: m.logger}, func(_ context.Context, evs []domain.Event) (int64, error) {
		for _, e := range evs {
			m.observe(e)
		}
		return evs[len(evs)-1].Position, nil
	})
	if err != nil && ctx.Err() == nil {
		return err
	}
	return nil // stopped by ctx
}

func (m *Metrics) observe(e domain.Event) {
	if e.Type != "TurnCompleted" && e.Type != "TaskFired" && !m.callEvents[e.Type] && !isChannelHealth(e.Type) && !isRefusal(e.Type) {
		return
	}
	p, err := m.decoder.Decode(e)
	if err != nil {
		m.logger.Warn("metrics: skip an event it cannot decode", "position", e.Position, "type", e.Type, "err", err)
		return
	}
	if c, ok := usage.ProviderCallOf(p); ok {
		m.call(c)
	}
	switch ev := p.(type) {
	case turn.TurnCompleted:
		m.turns.WithLabelValues(ev.Status, e.Metadata.Channel).Inc()
		m.turnLatency.WithLabelValues(e.Metadata.Channel).Observe(float64(ev.DurationMs) / 1000)
	case turn.ProviderFailed:
		m.providerErrs.WithLabelValues(ev.Provider, ev.Class).Inc()
	case task.TaskFired:
		if !ev.Due.IsZero() && !ev.FiredAt.IsZero() {
			m.lateness.Observe(max(ev.FiredAt.Sub(ev.Due), 0).Seconds())
		}
	case budget.BudgetExceeded:
		m.refused.WithLabelValues(ev.Purpose, "limit").Inc()
	case budget.LoopPaused:
		m.refused.WithLabelValues(ev.Purpose, "runaway").Inc()
	default:
		m.channelHealth(p)
	}
}

// isRefusal reports whether an event type records a call the budget
// guard refused.
func isRefusal(t string) bool { return t == "BudgetExceeded" || t == "LoopPaused" }

// isChannelHealth reports whether an event type is a channel's recorded
// change of health.
func isChannelHealth(t string) bool {
	return t == "ChannelDown" || t == "ChannelStalled" || t == "ChannelRecovered"
}

// channelHealth follows the channels' recorded health changes.
func (m *Metrics) channelHealth(p domain.Payload) {
	switch ev := p.(type) {
	case system.ChannelDown:
		m.channelUp.WithLabelValues(ev.Channel).Set(0)
		m.channelDowns.WithLabelValues(ev.Channel, "down").Inc()
	case system.ChannelStalled:
		m.channelUp.WithLabelValues(ev.Channel).Set(0)
		m.channelDowns.WithLabelValues(ev.Channel, "stalled").Inc()
	case system.ChannelRecovered:
		m.channelUp.WithLabelValues(ev.Channel).Set(1)
	}
}

// call counts one provider call under its purpose.
func (m *Metrics) call(c usage.ProviderCall) {
	outcome := "ok"
	if c.Failed {
		outcome = "error"
	}
	u := c.Usage
	m.callsBy.WithLabelValues(c.Purpose, outcome).Inc()
	m.providerCalls.WithLabelValues(outcome).Observe(float64(u.DurationMs) / 1000)
	if !u.UsageReported {
		return
	}
	m.tokens.WithLabelValues("input", c.Purpose).Add(float64(u.InputTokens))
	m.tokens.WithLabelValues("output", c.Purpose).Add(float64(u.OutputTokens))
	m.tokens.WithLabelValues("cache_read", c.Purpose).Add(float64(u.CacheReadTokens))
	m.tokens.WithLabelValues("cache_write", c.Purpose).Add(float64(u.CacheWriteTokens))
	m.cost.WithLabelValues(c.Purpose).Add(u.CostUSD)
}

// Ready answers /readyz: 200 when the database answers and projections
// trail the log by less than ReadyLag, else 503. A channel that cannot
// receive is named in the body ("degraded") but keeps the probe at 200: a
// Bot API outage is nothing a restart or a load balancer can fix, and
// taking the process out of rotation would close the HTTP door too. The
// body says nothing more than which channel cannot receive: the probe has
// no authentication.
func (m *Metrics) Ready() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		err := m.state.Ping(ctx)
		if err == nil {
			var lag engine.Lag
			if lag, err = m.state.Lag(ctx); err == nil && lag.Age > m.ReadyLag {
				err = errors.New("projections lag behind the log")
			}
		}
		var down []string
		if m.Channels != nil {
			down = m.Channels.UnhealthyChannels()
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		body := "ready\n"
		if len(down) > 0 {
			body = "ready, degraded\n"
		}
		if err != nil {
			m.logger.Warn("not ready", "err", err, "channels", down)
			w.WriteHeader(http.StatusServiceUnavailable)
			body = "not ready\n"
		}
		for _, c := range down {
			body += "channel " + c + "\n"
		}
		_, _ = w.Write([]byte(body))
	})
}
