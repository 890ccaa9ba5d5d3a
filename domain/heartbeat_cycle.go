package domain

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
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
		Usage *CallUsage `json:"usage,omitempty"`
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
		Group int        `json:"group"`
		Raw   string     `json:"raw"`
		Usage *CallUsage `json:"usage,omitempty"`
	}
	HeartbeatGroupFailed struct {
		Group int        `json:"group"`
		Error string     `json:"error"`
		Usage *CallUsage `json:"usage,omitempty"`
	}
	// HeartbeatGroupProcessed: the group's markers were applied and its
	// reply evaluated (OK means nothing for the user).
	HeartbeatGroupProcessed struct {
		Group   int             `json:"group"`
		Text    string          `json:"text,omitempty"`
		OK      bool            `json:"ok"`
		Markers []AppliedMarker `json:"markers,omitempty"`
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
func RegisterHeartbeatCycleEvents(r *Registry) {
	for _, p := range []Payload{HeartbeatCycleStarted{}, HeartbeatCycleResumed{}, HeartbeatClassified{}, HeartbeatGroupCalled{},
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

func (c *HeartbeatCycle) Apply(p Payload, version int64, at time.Time) {
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

// HeartbeatSlot is the clock-aligned boundary at or before now: intervals
// count from local midnight, so 30 minutes fires at :00 and :30 and a
// day's boundaries do not drift across DST changes.
func HeartbeatSlot(now time.Time, interval time.Duration, loc *time.Location) time.Time {
	if interval <= 0 {
		interval = 30 * time.Minute
	}
	local := now.In(loc)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	return midnight.Add(now.Sub(midnight).Truncate(interval))
}

// NextHeartbeatSlot is the first boundary after now; the last slot of a
// day ends at the next midnight.
func NextHeartbeatSlot(now time.Time, interval time.Duration, loc *time.Location) time.Time {
	if interval <= 0 {
		interval = 30 * time.Minute
	}
	slot := HeartbeatSlot(now, interval, loc)
	next := slot.Add(interval)
	l := slot.In(loc)
	tomorrow := time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, loc)
	if next.After(tomorrow) {
		next = tomorrow
	}
	return next
}

// HeartbeatOvershoot is how late a wake-up may be and still run its slot;
// later than that (a suspended laptop) the slot is skipped and the clock
// re-aligned.
const HeartbeatOvershoot = 2 * time.Minute

// --- active hours ---

// ActiveHours is a daily window in local time; the zero value is always
// active. End before Start wraps across midnight.
type ActiveHours struct {
	Start, End int // minutes after midnight
	Set        bool
}

var hhmm = regexp.MustCompile(`^([01]?\d|2[0-3]):([0-5]\d)$`)

// ParseActiveHours reads "HH:MM-HH:MM"; empty means always.
func ParseActiveHours(s string) (ActiveHours, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return ActiveHours{}, nil
	}
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return ActiveHours{}, fmt.Errorf("active hours %q: want HH:MM-HH:MM", s)
	}
	start, err := parseHHMM(from)
	if err != nil {
		return ActiveHours{}, fmt.Errorf("active hours %q: %w", s, err)
	}
	end, err := parseHHMM(to)
	if err != nil {
		return ActiveHours{}, fmt.Errorf("active hours %q: %w", s, err)
	}
	if start == end {
		return ActiveHours{}, fmt.Errorf("active hours %q: start equals end", s)
	}
	return ActiveHours{Start: start, End: end, Set: true}, nil
}

func parseHHMM(s string) (int, error) {
	m := hhmm.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	h, _ := strconv.Atoi(m[1])
	mm, _ := strconv.Atoi(m[2])
	return h*60 + mm, nil
}

func minuteOfDay(t time.Time) int { return t.Hour()*60 + t.Minute() }

// Contains says whether t (in loc) is inside the window.
func (a ActiveHours) Contains(t time.Time, loc *time.Location) bool {
	if !a.Set {
		return true
	}
	m := minuteOfDay(t.In(loc))
	if a.Start < a.End {
		return m >= a.Start && m < a.End
	}
	return m >= a.Start || m < a.End
}

// NextStart is the next start of the window after t: where a quiet
// heartbeat sleeps to. On a day whose start time does not exist (DST) it
// is the first instant after the gap.
func (a ActiveHours) NextStart(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	for d := 0; d <= 2; d++ {
		s := time.Date(l.Year(), l.Month(), l.Day()+d, a.Start/60, a.Start%60, 0, 0, loc)
		if s.After(t) {
			return s
		}
	}
	return t.Add(24 * time.Hour)
}

// --- checklist sections ---

// HeartbeatSectionName is the name of a "## NAME — description" header:
// the text before an em-dash, trimmed; "" for a line that is no header.
func HeartbeatSectionName(line string) string {
	l := strings.TrimSpace(line)
	if !strings.HasPrefix(l, "## ") {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimSpace(l[3:]), " — ")
	return strings.TrimSpace(name)
}

// normalizeSection compares section and project names: case-insensitive,
// hyphens and underscores as spaces.
func normalizeSection(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("-", " ", "_", " ").Replace(strings.ToLower(s))), " ")
}

// HeartbeatChecklist is what a cycle checks: items minus those in
// suppressed sections and in sections named like excluded (projects that
// run their own heartbeat). A section is its header line up to the next
// header; items before the first header belong to no section. Returned
// are the surviving lines (headers kept while they have items) and the
// number of real items among them.
func HeartbeatChecklist(items, suppressed, excluded []string) (lines []string, count int) {
	drop := map[string]bool{}
	for _, s := range append(slices.Clone(suppressed), excluded...) {
		drop[normalizeSection(s)] = true
	}
	skipping := false
	var header string
	for _, it := range items {
		if name := HeartbeatSectionName(it); name != "" {
			skipping, header = drop[normalizeSection(name)], it
			continue
		}
		if skipping || strings.TrimSpace(it) == "" {
			continue
		}
		if header != "" {
			lines, header = append(lines, header), ""
		}
		lines = append(lines, it)
		if !strings.HasPrefix(strings.TrimSpace(it), "#") {
			count++
		}
	}
	if count == 0 {
		return nil, 0
	}
	return lines, count
}

// --- grouping ---

// ErrHeartbeatGroups is a classification that cannot be used.
var ErrHeartbeatGroups = errors.New("unusable heartbeat classification")

// ParseHeartbeatGroups reads the classifier's reply for the numbered items
// (1-based): "DIRECT", or one group per line "<name>: 1, 3, 4". Items no
// group names are gathered in a last group; a number out of range, or a
// reply with no group, is an error (the caller falls back to one call).
func ParseHeartbeatGroups(reply string, items []string) ([]HeartbeatGroup, error) {
	if strings.EqualFold(strings.Trim(strings.TrimSpace(reply), "*`. "), "DIRECT") {
		return []HeartbeatGroup{{Name: "all", Items: items}}, nil
	}
	seen := map[int]bool{}
	var groups []HeartbeatGroup
	for _, line := range strings.Split(reply, "\n") {
		name, list, ok := strings.Cut(strings.Trim(strings.TrimSpace(line), "-*` "), ":")
		if !ok || strings.TrimSpace(list) == "" {
			continue
		}
		g := HeartbeatGroup{Name: strings.Trim(strings.TrimSpace(name), "*`")}
		var err error
		if g.Items, err = claimGroupItems(list, items, seen); err != nil {
			return nil, err
		}
		if len(g.Items) > 0 {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("%w: no group in %q", ErrHeartbeatGroups, reply)
	}
	if rest := unclaimedItems(items, seen); len(rest) > 0 {
		groups = append(groups, HeartbeatGroup{Name: "other", Items: rest})
	}
	return groups, nil
}

// claimGroupItems returns the items a group line's list numbers (1-based)
// that no earlier group claimed, and marks them seen; words that are not
// numbers are skipped, a number out of range is an error.
func claimGroupItems(list string, items []string, seen map[int]bool) ([]string, error) {
	var claimed []string
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(strings.Trim(f, "#."))
		if err != nil {
			continue
		}
		if n < 1 || n > len(items) {
			return nil, fmt.Errorf("%w: item %d of %d", ErrHeartbeatGroups, n, len(items))
		}
		if !seen[n] {
			seen[n] = true
			claimed = append(claimed, items[n-1])
		}
	}
	return claimed, nil
}

// unclaimedItems are the items no group named, in order.
func unclaimedItems(items []string, seen map[int]bool) []string {
	var rest []string
	for i, it := range items {
		if !seen[i+1] {
			rest = append(rest, it)
		}
	}
	return rest
}

// HeartbeatOK says whether a group's reply (markers already stripped) has
// nothing for the user once markdown and the HEARTBEAT_OK token are gone,
// and returns the text to send otherwise.
func HeartbeatOK(text string) (bool, string) {
	clean := strings.ReplaceAll(text, "HEARTBEAT_OK", "")
	bare := strings.Trim(strings.NewReplacer("*", "", "_", "", "`", "", "#", "", ">", "").Replace(clean), " \t\r\n.")
	if bare == "" {
		return true, ""
	}
	return false, strings.TrimSpace(clean)
}

// ProviderCall is the provider call the event records.
func (e HeartbeatClassified) ProviderCall() (ProviderCall, bool) {
	return OptionalCall(PurposeHeartbeat, e.Usage, e.Raw == "" && e.Error != "")
}

// ProviderCall is the provider call the event records.
func (e HeartbeatGroupReplied) ProviderCall() (ProviderCall, bool) {
	return CalledCall(PurposeHeartbeat, e.Usage, false)
}

// ProviderCall is the provider call the event records.
func (e HeartbeatGroupFailed) ProviderCall() (ProviderCall, bool) {
	return CalledCall(PurposeHeartbeat, e.Usage, true)
}
