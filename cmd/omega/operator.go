package main

import (
	"context"
	"net/http"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/api/metrics"
	"github.com/omega-gateway/omega/api/webui"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/heartbeat"
)

// startMetrics starts counting what the log records and times this
// process's appends (a.Store is replaced by the timed store).
func startMetrics(ctx context.Context, a *app.App) (*metrics.Metrics, error) {
	m, err := metrics.New(a.Engine, a.Registry, a.Logger)
	if err != nil {
		return nil, err
	}
	m.ReadyLag = a.Config.ReadyMaxLag
	head, err := a.Engine.Head(ctx)
	if err != nil {
		return nil, err
	}
	a.Store = timedStore{Store: a.Store, m: m}
	go func() {
		if err := m.Follow(ctx, a.Store, head); err != nil {
			a.Logger.Error("metrics stopped following the log", "err", err)
		}
	}()
	return m, nil
}

// operatorViews puts the audit API, the metrics and the web UI on the
// HTTP server.
func operatorViews(srv *api.Server, a *app.App, m *metrics.Metrics, rt *app.Runtime) error {
	log := a.Audit
	opts := webui.Options{Audit: log, Log: a.Store, Decoder: a.Registry, Changed: a.Engine.Applied, Token: srv.Token, Logger: a.Logger,
		Stream: http.HandlerFunc(srv.StreamTurn), Channels: channelStatuses(rt), Recall: a.Recall, Calls: a.Calls}
	if loc, err := a.Config.Location(); err == nil {
		opts.Location = loc
	}
	if a.Config.HeartbeatEnabled {
		opts.Checklists = heartbeat.Checklists{Store: a.Store, Registry: a.Registry}
	}
	states, err := a.States()
	if err != nil {
		return err
	}
	if opts.Location, err = a.Config.Location(); err != nil {
		return err
	}
	opts.States = states
	ui, err := webui.New(opts)
	if err != nil {
		return err
	}
	srv.Audit, srv.Ops, srv.UI = log, m, ui
	return nil
}

// channelStatuses reports the runtime's channels to the web UI.
func channelStatuses(rt *app.Runtime) func() []webui.ChannelStatus {
	return func() []webui.ChannelStatus {
		states := rt.ChannelStates()
		out := make([]webui.ChannelStatus, len(states))
		for i, s := range states {
			out[i] = webui.ChannelStatus{Name: s.Name, State: s.State, Since: s.Since}
		}
		return out
	}
}

// timedStore observes the latency of every append.
type timedStore struct {
	app.Store
	m *metrics.Metrics
}

func (s timedStore) Append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, events ...domain.NewEvent) (eventstore.AppendResult, error) {
	start := time.Now()
	res, err := s.Store.Append(ctx, stream, expected, events...)
	s.m.ObserveAppend(time.Since(start))
	return res, err
}
