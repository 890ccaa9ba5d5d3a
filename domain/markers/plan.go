package markers

import (
	"regexp"
	"strings"
)

var planStep = regexp.MustCompile(`^\s*\d+[.)]\s+(.+)$`)

// ParsePlan reads the planner's reply: the word DIRECT means "answer in one
// call" and gives nil; a numbered list ("1. ...", "2) ...") of two or more
// steps gives the steps; anything else (one step, no list) gives nil.
// Lines before the list are preamble and ignored.
//
// The seed says "contains DIRECT (any case)"; taken literally that would
// discard a plan whose step says "send a direct message", so DIRECT counts
// only as the reply's first word or as a line on its own.
func ParsePlan(text string) []string {
	if isDirect(text) {
		return nil
	}
	var steps []string
	for line := range strings.SplitSeq(text, "\n") {
		m := planStep.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if step := strings.TrimSpace(m[1]); step != "" {
			steps = append(steps, step)
		}
	}
	if len(steps) < 2 {
		return nil
	}
	return steps
}

func isDirect(text string) bool {
	const trim = " \t\r*_`.:!"
	first, _, _ := strings.Cut(strings.TrimLeft(text, " \t\r\n*_`"), "\n")
	if word, _, _ := strings.Cut(strings.TrimSpace(first), " "); strings.EqualFold(strings.Trim(word, trim), "DIRECT") {
		return true
	}
	for line := range strings.SplitSeq(text, "\n") {
		if strings.EqualFold(strings.Trim(line, trim), "DIRECT") {
			return true
		}
	}
	return false
}
