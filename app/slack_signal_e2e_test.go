package app_test

import (
	"strconv"
	"testing"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/signal"
	"github.com/omega-gateway/omega/channels/signal/signaltest"
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

// Over Signal, through the signal-cli daemon double: an image the
// provider draws is sent as an attachment to the person, once, its
// timestamp on record; a photo the person sent is fetched from the
// daemon (getAttachment) and reaches the turn's inbox.
func TestSignalImagesBothWays(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			const bot, alice = "+4915100000001", "+4915100000002"
			d := signaltest.New(t, bot)
			vars := baseVars(t, b, drawingClaude(t))
			for k, v := range map[string]string{
				"OMEGA_HTTP_ADDR": "", "OMEGA_SIGNAL_URL": d.URL, "OMEGA_SIGNAL_ACCOUNT": bot, "OMEGA_SIGNAL_ALLOWED_NUMBERS": alice,
			} {
				vars[k] = v
			}
			n := startServedNode(t, vars)
			waitFor(t, "the event stream", d.Connected)

			ts := d.Push(signaltest.Message{From: alice, Text: "please DRAW a chart"})
			evs := n.waitTurn(t, signalTurnID(alice+":"+strconv.FormatInt(ts, 10)))
			var images []signaltest.Sent
			waitFor(t, "the chart sent", func() bool {
				images = nil
				for _, m := range d.SentTo(alice) {
					if len(m.Attachments) > 0 {
						images = append(images, m)
					}
				}
				return len(images) == 1
			})
			if a := images[0].Attachments[0]; a.Name != "chart.png" || a.MIME != "image/png" || string(a.Data) != chartPNG {
				t.Fatalf("attachment %+v", a)
			}
			want := bot + ":" + strconv.FormatInt(images[0].Timestamp, 10)
			if rec := payload[turn.WorkspaceImageSent](t, n, evs); rec.Path != "chart.png" || len(rec.PlatformIDs) != 1 || rec.PlatformIDs[0] != want {
				t.Fatalf("WorkspaceImageSent %+v, want id %s", rec, want)
			}

			photo := "\xff\xd8\xff\xe0 alice's photo"
			ts = d.Push(signaltest.Message{From: alice, Text: "COPY it", Attachments: []signaltest.Attachment{{Name: "me.jpg", MIME: "image/jpeg", Data: []byte(photo)}}})
			evs = n.waitTurn(t, signalTurnID(alice+":"+strconv.FormatInt(ts, 10)))
			found := payload[turn.WorkspaceImagesFound](t, n, evs)
			if len(found.Images) != 0 || len(found.Skipped) != 1 || found.Skipped[0].Path != "copy.jpg" || found.Skipped[0].Reason != turn.ImageSkipInbound {
				t.Fatalf("found %+v, want copy.jpg skipped as alice's own", found)
			}
		})
	}
}

func signalTurnID(platformID string) string {
	return intake.TurnID(channels.Incoming{Channel: signal.Name, PlatformID: platformID})
}
