package rerun

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// line is one line of an event rendered for reading: the event's type
// and the field it shows, for naming what changed.
type line struct {
	text, typ, key string
}

// compare lists what changed between the recorded and the re-run's
// normalized events: a unified diff of their rendered lines and the
// kinds of change; both nil when they are the same.
func compare(recorded, produced []string) (diff, changed []string) {
	if slices.Equal(recorded, produced) {
		return nil, nil
	}
	script := edits(renderAll(recorded), renderAll(produced))
	return unified(script), changedKinds(script)
}

// render shows a normalized event ("Type {json}") as lines: its type,
// then one line per field (nested objects flattened to a.b), a text of
// several lines one line each, so that a small change shows as the lines
// it touches.
func render(ev string) []line {
	typ, data, _ := strings.Cut(ev, " ")
	out := []line{{text: typ, typ: typ}}
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		return append(out, line{text: "  " + data, typ: typ})
	}
	return flatten(out, typ, "", v)
}

func flatten(out []line, typ, key string, v any) []line {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = flatten(out, typ, strings.TrimPrefix(key+"."+k, "."), t[k])
		}
		return out
	case string:
		if strings.Contains(t, "\n") {
			out = append(out, line{text: "  " + key + ": |", typ: typ, key: key})
			for _, l := range strings.Split(t, "\n") {
				out = append(out, line{text: "    " + l, typ: typ, key: key})
			}
			return out
		}
	}
	b, _ := json.Marshal(v) // decoded JSON: cannot fail
	return append(out, line{text: "  " + key + ": " + string(b), typ: typ, key: key})
}

func renderAll(evs []string) []line {
	var out []line
	for _, e := range evs {
		out = append(out, render(e)...)
	}
	return out
}

// op is one line of an edit script: ' ' kept, '-' recorded only, '+'
// re-run only.
type op struct {
	kind byte
	l    line
}

// maxCells bounds the table of the longest common subsequence; a longer
// middle shows as removed and added whole.
const maxCells = 4_000_000

// edits is the edit script from a to b: common prefix and suffix kept,
// the middle by longest common subsequence.
func edits(a, b []line) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre].text == b[pre].text {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf].text == b[len(b)-1-suf].text {
		suf++
	}
	var out []op
	for _, l := range a[:pre] {
		out = append(out, op{' ', l})
	}
	out = append(out, middle(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, op{' ', l})
	}
	return out
}

func middle(a, b []line) []op {
	var out []op
	if len(a)*len(b) > maxCells {
		for _, l := range a {
			out = append(out, op{'-', l})
		}
		for _, l := range b {
			out = append(out, op{'+', l})
		}
		return out
	}
	lcs := lcsTable(a, b)
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i].text == b[j].text:
			out = append(out, op{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, op{'-', a[i]})
			i++
		default:
			out = append(out, op{'+', b[j]})
			j++
		}
	}
	return out
}

// lcsTable: lcs[i][j] is the length of the longest common subsequence
// of a[i:] and b[j:].
func lcsTable(a, b []line) [][]int {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i].text == b[j].text {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	return lcs
}

// contextLines is the number of unchanged lines shown around a change.
const contextLines = 3

// unified renders an edit script as a unified diff of the recorded
// events (---) and the re-run's (+++); nil when nothing changed.
func unified(script []op) []string {
	var changed []int
	for i, o := range script {
		if o.kind != ' ' {
			changed = append(changed, i)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	out := []string{"--- recorded", "+++ re-run"}
	for start := 0; start < len(changed); {
		end := start
		for end+1 < len(changed) && changed[end+1]-changed[end] <= 2*contextLines+1 {
			end++
		}
		lo, hi := max(changed[start]-contextLines, 0), min(changed[end]+contextLines+1, len(script))
		out = append(out, hunk(script, lo, hi)...)
		start = end + 1
	}
	return out
}

// hunk renders script[lo:hi] with its header (1-based line numbers).
func hunk(script []op, lo, hi int) []string {
	aStart, bStart := 1, 1
	for _, o := range script[:lo] {
		if o.kind != '+' {
			aStart++
		}
		if o.kind != '-' {
			bStart++
		}
	}
	var aLen, bLen int
	body := make([]string, 0, hi-lo)
	for _, o := range script[lo:hi] {
		if o.kind != '+' {
			aLen++
		}
		if o.kind != '-' {
			bLen++
		}
		body = append(body, string(o.kind)+o.l.text)
	}
	return append([]string{fmt.Sprintf("@@ -%d,%d +%d,%d @@", aStart, aLen, bStart, bLen)}, body...)
}

// kinds name what an event's change is about, by event type; others are
// effects.
var kinds = map[string]string{
	"ContextBuilt": "prompt", "ProviderCalled": "model", "RouteDecided": "route",
	"ProviderReplied": "reply", "ProviderFailed": "reply", "ReplyReady": "reply", "ReplySent": "reply",
	"ReplyFailed": "reply", "CommandAnswered": "reply", "PlanStepCompleted": "reply", "PlanStepFailed": "reply",
	"TurnSuppressed": "reply", "MarkersApplied": "markers",
	"AccessGranted": "access", "AccessDenied": "access",
}

// changedKinds names what the changed lines are about (prompt, model,
// reply, markers, access, effects), in the order they first changed.
func changedKinds(script []op) []string {
	var out []string
	for _, o := range script {
		if o.kind == ' ' {
			continue
		}
		k := kinds[o.l.typ]
		switch field := o.l.key[strings.LastIndex(o.l.key, ".")+1:]; {
		case field == "model":
			k = "model"
		case field == "prompt_bytes": // the size of the prompt the call was given
			k = "prompt"
		case k == "":
			k = "effects"
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
