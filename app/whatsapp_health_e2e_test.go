package app_test

import (
	"context"
	"slices"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/channels/whatsapp/whatsapptest"
	"github.com/omega-gateway/omega/domain/system"
	"go.mau.fi/whatsmeow/types/events"
)

// A dropped WhatsApp connection is recorded on channel-whatsapp and makes
// the process degraded (what /readyz names) until it is connected again.
func TestWhatsAppOutageIsRecorded(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := richClaude(t)
			vars := baseVars(t, b, claude)
			vars["OMEGA_WHATSAPP_ENABLED"] = "true"
			vars["OMEGA_WHATSAPP_ALLOWED_NUMBERS"] = "+49 151 1234 5678"
			cfg := loadConfig(t, vars)
			fake := whatsapptest.New()
			wa := whatsapp.NewWithClient(whatsapp.From(cfg.Channels), fake, quiet)
			n := startChannelNode(t, cfg, app.RuntimeOptions{Channels: []channels.Channel{wa}}, nil)
			stream := system.ChannelStream(whatsapp.Name)
			recorded := func() []string {
				evs, err := n.rt.Store.Load(context.Background(), stream, 1)
				if err != nil {
					t.Fatal(err)
				}
				var types []string
				for _, e := range evs {
					types = append(types, e.Type)
				}
				return types
			}
			emit := func(evt any) {
				t.Helper()
				if _, err := fake.Deliver(evt); err != nil {
					t.Fatal(err)
				}
			}

			// A drop happens to a running channel: wait until it acknowledges
			// messages (an empty one, which it skips).
			waitFor(t, "the channel to run", func() bool {
				ok, err := fake.Deliver(whatsapptest.TextFrom("WAEMPTY", "4915112345678", ""))
				if err != nil {
					t.Fatal(err)
				}
				return ok
			})
			emit(&events.Disconnected{})
			emit(&events.Disconnected{})
			waitFor(t, "ChannelDown on "+stream, func() bool { return len(recorded()) == 1 })
			if got := n.rt.UnhealthyChannels(); !slices.Equal(got, []string{"whatsapp: down"}) {
				t.Fatalf("unhealthy %q while disconnected", got)
			}
			emit(&events.Connected{})
			waitFor(t, "ChannelRecovered on "+stream, func() bool { return len(recorded()) == 2 })
			if got, want := recorded(), []string{"ChannelDown", "ChannelRecovered"}; !slices.Equal(got, want) {
				t.Fatalf("recorded %q, want %q", got, want)
			}
			if got := n.rt.UnhealthyChannels(); len(got) != 0 {
				t.Fatalf("unhealthy %q after reconnecting", got)
			}
		})
	}
}
