package app_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/channelset"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/registry"
)

// pagerSettings are a channel's settings that only its descriptor names.
type pagerSettings struct {
	Token string   `env:"PAGER_TOKEN"`
	Rooms []string `env:"PAGER_ROOMS"`
}

func (p *pagerSettings) On() bool             { return p.Token != "" }
func (p *pagerSettings) Validate() error      { return nil }
func (p *pagerSettings) Secrets() []string    { return []string{p.Token} }
func (p *pagerSettings) Allowed() []string    { return p.Rooms }
func (p *pagerSettings) AllowlistVar() string { return "OMEGA_PAGER_ROOMS" }
func (p *pagerSettings) EnableVar() string    { return "OMEGA_PAGER_TOKEN" }

// pagerChannel hands what the test injects to the pipeline.
type pagerChannel struct {
	fakeChannel
	deliver chan channels.Deliver
}

func (p *pagerChannel) Start(ctx context.Context, d channels.Deliver) error {
	p.deliver <- d
	<-ctx.Done()
	return nil
}

// A channel added to the descriptor list alone is built by `omega
// serve`'s wiring from its settings, its allowlist enforced, and its
// messages answered.
func TestRegisteredChannelIsServed(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := fakeClaude(t)
			ch := &pagerChannel{fakeChannel: fakeChannel{name: "pager"}, deliver: make(chan channels.Deliver, 1)}
			pager := channels.Descriptor{Name: "pager", Title: "Pager",
				Settings:     func() channels.Settings { return &pagerSettings{} },
				Capabilities: channels.Capabilities{Alerts: true},
				Build: func(_ context.Context, s channels.Settings, _ channels.Env) (channels.Channel, error) {
					if s.(*pagerSettings).Token != "pg-token" {
						t.Errorf("built with %+v", s)
					}
					return ch, nil
				}}
			// beeper tells the owner when it loses its session, through
			// another channel that reaches them (it reads the pager's
			// variables, to keep the test short).
			var notify func(context.Context, string)
			beeper := channels.Descriptor{Name: "beeper", Title: "Beeper",
				Settings: func() channels.Settings { return &pagerSettings{} },
				Build: func(_ context.Context, _ channels.Settings, env channels.Env) (channels.Channel, error) {
					notify = env.NotifyOwner
					return &fakeChannel{name: "beeper"}, nil
				}}
			vars := baseVars(t, b, claude)
			vars["OMEGA_HTTP_ADDR"] = ""
			vars["OMEGA_PAGER_TOKEN"] = "pg-token"
			vars["OMEGA_PAGER_ROOMS"] = "room-1"
			cfg, err := config.LoadChannels(vars, append(registry.All(), pager, beeper))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a, err := app.Open(ctx, cfg, quiet, app.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			set, err := channelset.New(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(set.Channels, channels.Channel(ch)) || !slices.Equal(set.Auth.Allowed["pager"], []string{"room-1"}) {
				t.Fatalf("set = %+v", set)
			}
			notify(ctx, "Beeper logged out")
			if got := ch.texts("room-1"); !slices.Contains(got, "Beeper logged out") {
				t.Errorf("the owner was not told on the pager: %q", got)
			}
			rt, err := a.NewRuntime(ctx, set.RuntimeOptions())
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { defer close(done); _ = rt.Run(ctx) }()
			defer func() { cancel(); <-done }()
			deliver := <-ch.deliver
			for i, sender := range []string{"stranger", "room-1"} {
				in := channels.Incoming{Channel: "pager", SenderID: sender, ChatID: sender, Text: "hello pager",
					PlatformID: sender + string(rune('a'+i))}
				if err := deliver(ctx, in); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, "the pager's owner answered", func() bool {
				return slices.ContainsFunc(ch.texts("room-1"), func(s string) bool { return strings.Contains(s, "echo: hello pager") })
			})
			if got := ch.texts("stranger"); slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "echo:") }) {
				t.Errorf("a sender off the pager's allowlist was answered: %q", got)
			}
		})
	}
}
