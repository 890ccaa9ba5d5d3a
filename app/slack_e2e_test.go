package app_test

import (
	"testing"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/slack"
	"github.com/omega-gateway/omega/channels/slack/slacktest"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/intake"
)

const slackAlice = "UALICE01"

// Over Slack, as `omega serve` builds the channel from its settings: an
// image the provider draws is uploaded (the external upload flow) into
// the thread the person wrote in, once, its file id on record; a photo
// the person shared is downloaded with the bot token and reaches the
// turn's inbox (the provider's copy of it is recognised as theirs and
// not sent back).
func TestSlackImagesBothWays(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := slacktest.New(t)
			vars := baseVars(t, b, drawingClaude(t))
			for k, v := range map[string]string{
				"OMEGA_HTTP_ADDR": "", "OMEGA_SLACK_BOT_TOKEN": slacktest.BotToken, "OMEGA_SLACK_APP_TOKEN": slacktest.AppToken,
				"OMEGA_SLACK_API_URL": s.APIURL(), "OMEGA_SLACK_ALLOWED_USERS": slackAlice,
			} {
				vars[k] = v
			}
			n := startServedNode(t, vars)
			waitFor(t, "the Socket Mode connection", s.Connected)

			ts := s.PushChannel(slackAlice, "CTEAM", "<@"+slacktest.BotUserID+"> please DRAW a chart", "")
			evs := n.waitTurn(t, slackTurnID("CTEAM:"+ts))
			var up []slacktest.Upload
			waitFor(t, "the chart uploaded", func() bool { up = s.Uploads(); return len(up) == 1 })
			if u := up[0]; u.Name != "chart.png" || string(u.Data) != chartPNG || u.Channel != "CTEAM" || u.ThreadTS != ts {
				t.Fatalf("upload %+v", u)
			}
			if rec := payload[turn.WorkspaceImageSent](t, n, evs); rec.Path != "chart.png" || len(rec.PlatformIDs) != 1 || rec.PlatformIDs[0] != "file:"+up[0].FileID {
				t.Fatalf("WorkspaceImageSent %+v, upload %s", rec, up[0].FileID)
			}
			replies := s.Messages("CTEAM")
			if len(replies) != 1 || replies[0].ThreadTS != ts {
				t.Fatalf("replies %+v, want one in thread %s", replies, ts)
			}

			photo := "\xff\xd8\xff\xe0 alice's photo"
			pts := s.PushFile(slackAlice, slacktest.DMChannel(slackAlice), "im", "COPY it", "me.jpg", "image/jpeg", []byte(photo))
			evs = n.waitTurn(t, slackTurnID(slacktest.DMChannel(slackAlice)+":"+pts))
			found := payload[turn.WorkspaceImagesFound](t, n, evs)
			if len(found.Images) != 0 || len(found.Skipped) != 1 || found.Skipped[0].Path != "copy.jpg" || found.Skipped[0].Reason != turn.ImageSkipInbound {
				t.Fatalf("found %+v, want copy.jpg skipped as alice's own", found)
			}
		})
	}
}

func slackTurnID(platformID string) string {
	return intake.TurnID(channels.Incoming{Channel: slack.Name, PlatformID: platformID})
}
