package heartbeat

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// HeartbeatStream is the checklist stream of a scope (a project, or
// GlobalHeartbeat).
func HeartbeatStream(scope string) string { return "heartbeat-" + scope }

// GlobalHeartbeat is the scope of the checklist outside any project.
const GlobalHeartbeat = "global"

// Heartbeat checklist events.
type (
	HeartbeatItemAdded struct {
		Item string `json:"item"`
	}
	HeartbeatItemRemoved struct {
		Keyword string   `json:"keyword"`
		Removed []string `json:"removed"`
	}
	HeartbeatIntervalSet struct {
		Minutes int `json:"minutes"`
		// By is who set it (IntervalByAgent, IntervalByCLI); empty in
		// events recorded before it was kept.
		By string `json:"by,omitempty"`
	}
	HeartbeatSectionSuppressed struct {
		Section string `json:"section"`
	}
	HeartbeatSectionUnsuppressed struct {
		Section string `json:"section"`
	}
	// HeartbeatFileImported records that a HEARTBEAT.md was imported (its
	// items follow as HeartbeatItemAdded), so an unchanged file is not
	// imported again.
	HeartbeatFileImported struct {
		Path string `json:"path"`
		Hash string `json:"hash"`
	}
)

func (HeartbeatItemAdded) EventType() string           { return "HeartbeatItemAdded" }
func (HeartbeatItemRemoved) EventType() string         { return "HeartbeatItemRemoved" }
func (HeartbeatIntervalSet) EventType() string         { return "HeartbeatIntervalSet" }
func (HeartbeatSectionSuppressed) EventType() string   { return "HeartbeatSectionSuppressed" }
func (HeartbeatSectionUnsuppressed) EventType() string { return "HeartbeatSectionUnsuppressed" }
func (HeartbeatFileImported) EventType() string        { return "HeartbeatFileImported" }

// RegisterHeartbeatChecklistEvents adds the checklist events to a registry.
func RegisterHeartbeatChecklistEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{HeartbeatItemAdded{}, HeartbeatItemRemoved{}, HeartbeatIntervalSet{}, HeartbeatSectionSuppressed{}, HeartbeatSectionUnsuppressed{}, HeartbeatFileImported{}} {
		r.Register(p, 1)
	}
}

// ErrHeartbeatInterval rejects intervals outside 1..1440 minutes.
var ErrHeartbeatInterval = errors.New("heartbeat interval must be 1 to 1440 minutes")

// Heartbeat is the checklist of one scope.
type Heartbeat struct {
	Version    int64
	Items      []string
	Interval   int // minutes; 0 means the configured default
	IntervalBy string
	Suppressed []string
	// Imported maps an imported file's path to its content hash.
	Imported map[string]string
}

func (h *Heartbeat) Apply(p domain.Payload, version int64, _ time.Time) {
	h.Version = version
	switch e := p.(type) {
	case HeartbeatItemAdded:
		h.Items = append(h.Items, e.Item)
	case HeartbeatItemRemoved:
		h.Items = slices.DeleteFunc(h.Items, func(s string) bool { return slices.Contains(e.Removed, s) })
	case HeartbeatIntervalSet:
		h.Interval, h.IntervalBy = e.Minutes, e.By
	case HeartbeatSectionSuppressed:
		h.Suppressed = append(h.Suppressed, e.Section)
	case HeartbeatSectionUnsuppressed:
		h.Suppressed = slices.DeleteFunc(h.Suppressed, func(s string) bool { return strings.EqualFold(s, e.Section) })
	case HeartbeatFileImported:
		if h.Imported == nil {
			h.Imported = map[string]string{}
		}
		h.Imported[e.Path] = e.Hash
	}
}

// Add decides adding an item; none when an equal item (any case) exists.
func (h Heartbeat) Add(item string) []domain.Payload {
	item = strings.TrimSpace(item)
	if item == "" || slices.ContainsFunc(h.Items, func(s string) bool { return strings.EqualFold(s, item) }) {
		return nil
	}
	return []domain.Payload{HeartbeatItemAdded{Item: item}}
}

// Import decides adding a file's items (see ParseHeartbeatFile): none when
// the same content was imported from path before; items already on the
// list (any case) are skipped.
func (h Heartbeat) Import(path, hash string, items []string) []domain.Payload {
	if h.Imported[path] == hash {
		return nil
	}
	var out []domain.Payload
	for _, it := range items {
		next := h
		next.Items = slices.Clone(h.Items)
		for _, p := range out {
			next.Items = append(next.Items, p.(HeartbeatItemAdded).Item)
		}
		out = append(out, next.Add(it)...)
	}
	return append(out, HeartbeatFileImported{Path: path, Hash: hash})
}

// ParseHeartbeatFile reads a HEARTBEAT.md: "## " headers and list items
// ("- ", "* " or plain lines) are items; blank lines and "# " titles are
// not.
func ParseHeartbeatFile(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case l == "", strings.HasPrefix(l, "# "), l == "#":
			continue
		case strings.HasPrefix(l, "## "):
			out = append(out, l)
		default:
			l = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "- "), "* "))
			if l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// Export writes the checklist as a HEARTBEAT.md.
func (h Heartbeat) Export() string {
	var b strings.Builder
	for _, it := range h.Items {
		if HeartbeatSectionName(it) != "" {
			b.WriteString("\n" + it + "\n")
			continue
		}
		b.WriteString("- " + it + "\n")
	}
	return strings.TrimLeft(b.String(), "\n")
}

// Remove decides removing every item containing keyword, any case.
func (h Heartbeat) Remove(keyword string) []domain.Payload {
	k := strings.ToLower(strings.TrimSpace(keyword))
	if k == "" {
		return nil
	}
	var removed []string
	for _, s := range h.Items {
		if strings.Contains(strings.ToLower(s), k) {
			removed = append(removed, s)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	return []domain.Payload{HeartbeatItemRemoved{Keyword: keyword, Removed: removed}}
}

// Who set a heartbeat interval (HeartbeatIntervalSet.By).
const (
	IntervalByAgent = "agent" // a HEARTBEAT_INTERVAL marker in a reply
	IntervalByCLI   = "cli"   // omega heartbeat interval
)

// SetInterval decides a new interval, set by by.
func (h Heartbeat) SetInterval(minutes int, by string) ([]domain.Payload, error) {
	if minutes < 1 || minutes > 1440 {
		return nil, fmt.Errorf("%w: %d", ErrHeartbeatInterval, minutes)
	}
	if minutes == h.Interval {
		return nil, nil
	}
	return []domain.Payload{HeartbeatIntervalSet{Minutes: minutes, By: by}}, nil
}

// Suppress decides hiding a section from heartbeat reports.
func (h Heartbeat) Suppress(section string) []domain.Payload {
	section = strings.TrimSpace(section)
	if section == "" || h.suppressed(section) {
		return nil
	}
	return []domain.Payload{HeartbeatSectionSuppressed{Section: section}}
}

// Unsuppress decides showing a section again.
func (h Heartbeat) Unsuppress(section string) []domain.Payload {
	section = strings.TrimSpace(section)
	if !h.suppressed(section) {
		return nil
	}
	return []domain.Payload{HeartbeatSectionUnsuppressed{Section: section}}
}

func (h Heartbeat) suppressed(section string) bool {
	return slices.ContainsFunc(h.Suppressed, func(s string) bool { return strings.EqualFold(s, section) })
}
