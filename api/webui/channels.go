package webui

import (
	"time"
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
func channelsHTML(d *doc, chs []ChannelStatus, now time.Time) {
	if len(chs) == 0 {
		return
	}
	d.raw(`<p class="channels">Channels: `)
	for i, c := range chs {
		if i > 0 {
			d.raw(` `)
		}
		class, label := "st-ok", "receiving"
		if c.State != "up" {
			class, label = "st-failed", c.State
		}
		d.raw(`<span class="badge `, class, `" data-channel="`)
		d.esc(c.Name)
		d.raw(`">`)
		d.esc(c.Name + ": " + label)
		if c.State != "up" && !c.Since.IsZero() {
			d.esc(" for " + now.Sub(c.Since).Round(time.Second).String())
		}
		d.raw(`</span>`)
	}
	d.raw("</p>\n")
}
