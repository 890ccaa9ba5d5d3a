package heartbeat

import (
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/usage"
)

// HeartbeatCycleStream is the stream of one heartbeat check-in: scope and
// its clock-aligned slot, so that of several processes exactly one can
// start it (the first append expects no stream).
func HeartbeatCycleStream(scope string, slot time.Time) string {
	return "heartbeat-" + scope + "-" + slot.UTC().Format("20060102T150405Z")
}

// HeartbeatGroup is a set of checklist items checked by one provider call.
type HeartbeatGroup struct {
	Name  string   `json:"name"`
	Items []string `json:"items"`
}

// Heartbeat cycle events, on stream heartbeat-<scope>-<slot>.
type (
	// HeartbeatCycleStarted claims the slot and records what the check-in
	// works from: the checklist after suppression and de-duplication, and
	// the enrichment that precedes it in the prompt.
	HeartbeatCycleStarted struct {
		Scope      string    `json:"scope"`
		Project    string    `json:"project,omitempty"`
		Slot       time.Time `json:"slot"`
		Items      []string  `json:"items"`
		Enrichment string    `json:"enrichment,omitempty"`
		Target     string    `json:"target,omitempty"`
		// Owner is the process (node identity) running the cycle.
		Owner string `json:"owner,omitempty"`
	}
	// HeartbeatCycleResumed: a process took up an unfinished cycle (its
	// own after a restart, or another's that went stale).
	HeartbeatCycleResumed struct {
		Owner string `json:"owner"`
	}
	// HeartbeatClassified records the grouping: the classifier's raw
	// reply (empty when the checklist was too short to classify) and the
	// groups run. A failed classification falls back to one group.
	HeartbeatClassified struct {
		Raw    string           `json:"raw,omitempty"`
		Error  string           `json:"error,omitempty"`
		Groups []HeartbeatGroup `json:"groups"`
		// Usage is the grouping call's; none when the list was short
		// enough to need no call.
		Usage *usage.CallUsage `json:"usage,omitempty"`
	}
	// HeartbeatGroupCalled is recorded before a group's provider call.
	HeartbeatGroupCalled struct {
		Group  int    `json:"group"`
		Model  string `json:"model,omitempty"`
		Prompt string `json:"prompt"`
	}
	// HeartbeatGroupReplied is the raw reply, recorded before its markers
	// are applied: a resumed cycle never calls again for it.
	HeartbeatGroupReplied struct {
		Group int              `json:"group"`
		Raw   string           `json:"raw"`
		Usage *usage.CallUsage `json:"usage,omitempty"`
	}
	HeartbeatGroupFailed struct {
		Group int              `json:"group"`
		Error string           `json:"error"`
		Usage *usage.CallUsage `json:"usage,omitempty"`
	}
	// HeartbeatGroupProcessed: the group's markers were applied and its
	// reply evaluated (OK means nothing for the user).
	HeartbeatGroupProcessed struct {
		Group   int                     `json:"group"`
		Text    string                  `json:"text,omitempty"`
		OK      bool                    `json:"ok"`
		Markers []markers.AppliedMarker `json:"markers,omitempty"`
	}
	// HeartbeatAlertStarted claims the sending of the joined alert.
	HeartbeatAlertStarted struct {
		Text   string `json:"text"`
		Target string `json:"target,omitempty"`
	}
	HeartbeatAlertSent struct {
		PlatformIDs []string `json:"platform_ids,omitempty"`
	}
	// HeartbeatAlertFailed: the alert could not be delivered (no target,
	// or the platform refused); its text stays on record.
	HeartbeatAlertFailed struct {
		Error string `json:"error"`
	}
	// HeartbeatCycleCompleted ends the cycle: outcome is suppressed (all
	// OK), sent, undeliverable or failed.
	HeartbeatCycleCompleted struct {
		Outcome string `json:"outcome"`
	}
)

func (HeartbeatCycleStarted) EventType() string   { return "HeartbeatCycleStarted" }
func (HeartbeatClassified) EventType() string     { return "HeartbeatClassified" }
func (HeartbeatCycleResumed) EventType() string   { return "HeartbeatCycleResumed" }
func (HeartbeatGroupCalled) EventType() string    { return "HeartbeatGroupCalled" }
func (HeartbeatGroupReplied) EventType() string   { return "HeartbeatGroupReplied" }
func (HeartbeatGroupFailed) EventType() string    { return "HeartbeatGroupFailed" }
func (HeartbeatGroupProcessed) EventType() string { return "HeartbeatGroupProcessed" }
func (HeartbeatAlertStarted) EventType() string   { return "HeartbeatAlertStarted" }
func (HeartbeatAlertSent) EventType() string      { return "HeartbeatAlertSent" }
func (HeartbeatAlertFailed) EventType() string    { return "HeartbeatAlertFailed" }
func (HeartbeatCycleCompleted) EventType() string { return "HeartbeatCycleCompleted" }

// Cycle outcomes.
const (
	HeartbeatSuppressed    = "suppressed"
	HeartbeatSent          = "sent"
	HeartbeatUndeliverable = "undeliverable"
	HeartbeatFailed        = "failed"
)

// RegisterHeartbeatCycleEvents adds the cycle events to a registry.
func RegisterHeartbeatCycleEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{HeartbeatCycleStarted{}, HeartbeatCycleResumed{}, HeartbeatClassified{}, HeartbeatGroupCalled{},
		HeartbeatGroupReplied{}, HeartbeatGroupFailed{}, HeartbeatGroupProcessed{}, HeartbeatAlertStarted{},
		HeartbeatAlertSent{}, HeartbeatAlertFailed{}, HeartbeatCycleCompleted{}} {
		r.Register(p, 1)
	}
}

// HeartbeatDirectMax is the longest checklist run as one call without
// classification.
const HeartbeatDirectMax = 3

// HeartbeatCycle is the fold of one cycle stream.
type HeartbeatCycle struct {
	Version    int64
	Owner      string
	Changed    time.Time // when the last event was recorded
	Started    *HeartbeatCycleStarted
	Classified *HeartbeatClassified
	Calls      map[int]int
	Replies    map[int]string
	Failed     map[int]string
	Processed  map[int]HeartbeatGroupProcessed
	Alert      *HeartbeatAlertStarted
	AlertDone  bool
	AlertError string
	Completed  *HeartbeatCycleCompleted
}

func (c *HeartbeatCycle) Apply(p domain.Payload, version int64, at time.Time) {
	c.Version, c.Changed = version, at
	if c.Calls == nil {
		c.Calls, c.Replies, c.Failed, c.Processed = map[int]int{}, map[int]string{}, map[int]string{}, map[int]HeartbeatGroupProcessed{}
	}
	switch e := p.(type) {
	case HeartbeatCycleStarted:
		c.Started, c.Owner = &e, e.Owner
	case HeartbeatCycleResumed:
		c.Owner = e.Owner
	case HeartbeatClassified:
		c.Classified = &e
	case HeartbeatGroupCalled:
		c.Calls[e.Group]++
	case HeartbeatGroupReplied:
		c.Replies[e.Group] = e.Raw
		delete(c.Failed, e.Group)
	case HeartbeatGroupFailed:
		c.Failed[e.Group] = e.Error
	case HeartbeatGroupProcessed:
		c.Processed[e.Group] = e
	case HeartbeatAlertStarted:
		c.Alert = &e
	case HeartbeatAlertSent:
		c.AlertDone = true
	case HeartbeatAlertFailed:
		c.AlertDone, c.AlertError = true, e.Error
	case HeartbeatCycleCompleted:
		c.Completed = &e
	}
}

// HeartbeatStep is what a cycle needs next.
type HeartbeatStep int

const (
	HeartbeatStepNone     HeartbeatStep = iota // not started, or completed
	HeartbeatStepClassify                      // group the items
	HeartbeatStepCall                          // call the groups in PendingGroups
	HeartbeatStepProcess                       // apply the markers of replied groups
	HeartbeatStepAlert                         // claim and send the alert
	HeartbeatStepComplete                      // record the outcome
)

// MaxHeartbeatGroupCalls bounds the calls of one group: a call is repeated
// only when the process ended between it and its recorded reply.
const MaxHeartbeatGroupCalls = 2

// Next decides the cycle's next step.
func (c HeartbeatCycle) Next() HeartbeatStep {
	switch {
	case c.Started == nil || c.Completed != nil:
		return HeartbeatStepNone
	case c.Classified == nil:
		return HeartbeatStepClassify
	case len(c.PendingGroups()) > 0:
		return HeartbeatStepCall
	case len(c.Unprocessed()) > 0:
		return HeartbeatStepProcess
	case c.Alert == nil && c.AlertText() != "":
		return HeartbeatStepAlert
	}
	return HeartbeatStepComplete
}

// PendingGroups are the groups without a reply or failure that may still
// be called.
func (c HeartbeatCycle) PendingGroups() []int {
	var out []int
	for i := range c.groups() {
		_, replied := c.Replies[i]
		_, failed := c.Failed[i]
		if !replied && !failed && c.Calls[i] < MaxHeartbeatGroupCalls {
			out = append(out, i)
		}
	}
	return out
}

// Unprocessed are the replied groups whose markers were not applied yet.
func (c HeartbeatCycle) Unprocessed() []int {
	var out []int
	for i := range c.groups() {
		if _, ok := c.Replies[i]; ok {
			if _, done := c.Processed[i]; !done {
				out = append(out, i)
			}
		}
	}
	return out
}

func (c HeartbeatCycle) groups() []HeartbeatGroup {
	if c.Classified == nil {
		return nil
	}
	return c.Classified.Groups
}

// AlertText joins the non-OK group results with "---", in group order.
func (c HeartbeatCycle) AlertText() string {
	if c.Alert != nil {
		return c.Alert.Text
	}
	var parts []string
	for i := range c.groups() {
		if p, ok := c.Processed[i]; ok && !p.OK && strings.TrimSpace(p.Text) != "" {
			parts = append(parts, strings.TrimSpace(p.Text))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return c.alertLabel() + "\n\n" + strings.Join(parts, "\n\n---\n\n")
}

// alertLabel heads an alert, so that a project's check-in and the global
// one, which may say the same words in the same minute, are told apart.
func (c HeartbeatCycle) alertLabel() string {
	if c.Started != nil && c.Started.Project != "" {
		return "Heartbeat — project " + c.Started.Project + ":"
	}
	return "Heartbeat:"
}

// Outcome is what the completed cycle amounts to.
func (c HeartbeatCycle) Outcome() string {
	switch {
	case c.Alert == nil && len(c.Failed) > 0:
		return HeartbeatFailed
	case c.Alert == nil:
		return HeartbeatSuppressed
	case c.AlertError != "":
		return HeartbeatUndeliverable
	}
	return HeartbeatSent
}

// --- clock alignment ---

// ProviderCall is the provider call the event records.
func (e HeartbeatClassified) ProviderCall() (usage.ProviderCall, bool) {
	return usage.OptionalCall(usage.PurposeHeartbeat, e.Usage, e.Raw == "" && e.Error != "")
}

// ProviderCall is the provider call the event records.
func (e HeartbeatGroupReplied) ProviderCall() (usage.ProviderCall, bool) {
	return usage.CalledCall(usage.PurposeHeartbeat, e.Usage, false)
}

// ProviderCall is the provider call the event records.
func (e HeartbeatGroupFailed) ProviderCall() (usage.ProviderCall, bool) {
	return usage.CalledCall(usage.PurposeHeartbeat, e.Usage, true)
}
