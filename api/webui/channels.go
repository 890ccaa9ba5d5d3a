package webui

import (
	"time"

	"github.com/omega-gateway/omega/api/webui/html"
)

// ChannelStatus is whether one running channel can receive messages now.
type ChannelStatus struct {
	Name  string
	State string    // "up", "down" or "stalled" (channels.Health states)
	Since time.Time // when it entered the state; zero: since the start
}

// channelsHTML writes the running channels' states above the audit list,
// so an operator sees a channel that stopped receiving without opening
// /readyz.
func channelsHTML(d *html.Doc, chs []ChannelStatus, now time.Time) {
	if len(chs) == 0 {
		return
	}
	d.Raw(`<p class="channels">Channels: `)
	for i, c := range chs {
		if i > 0 {
			d.Raw(` `)
		}
		class, label := "st-ok", "receiving"
		if c.State != "up" {
			class, label = "st-failed", c.State
		}
		d.Raw(`<span class="badge `, class, `" data-channel="`)
		d.Esc(c.Name)
		d.Raw(`">`)
		d.Esc(c.Name + ": " + label)
		if c.State != "up" && !c.Since.IsZero() {
			d.Esc(" for " + now.Sub(c.Since).Round(time.Second).String())
		}
		d.Raw(`</span>`)
	}
	d.Raw("</p>\n")
}
