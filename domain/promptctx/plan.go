package promptctx

import (
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain/turn"
)

// Classification context limits (seed: build_classification_context).
const (
	classifyHistory = 3
	classifyChars   = 80
)

const classifyInstructions = `You route requests for a personal assistant. Decide whether the request below can be handled in a single reply, or needs several steps carried out one after another.
Reply with the single word DIRECT for greetings, reminders, scheduling, lookups, simple questions and anything else one reply can do. When in doubt, reply DIRECT.
Only for complex work (changes across many files, deep research, work whose parts depend on each other) reply with a numbered list of 2 to 8 short steps, one per line, and nothing else.`

// ClassificationContext is the lightweight context the classifier sees:
// the active project, the last few messages (each cut short) and the
// skill names. Empty parts are left out; no input gives "".
func ClassificationContext(project string, history []turn.HistoryMessage, skills []string) string {
	var parts []string
	if project != "" {
		parts = append(parts, "Active project: "+project)
	}
	if len(history) > 0 {
		recent := history[max(0, len(history)-classifyHistory):]
		lines := []string{"Recent conversation:"}
		for _, h := range recent {
			lines = append(lines, fmt.Sprintf("- %s: %s", h.Role, truncateRunes(oneLine(h.Text), classifyChars)))
		}
		parts = append(parts, strings.Join(lines, "\n"))
	}
	if len(skills) > 0 {
		parts = append(parts, "Available skills: "+strings.Join(skills, ", "))
	}
	return strings.Join(parts, "\n")
}

// ClassificationPrompt is the whole classification request. The user's
// request comes last so that the classifier reads it after the rules.
func ClassificationPrompt(message, context string) string {
	var b strings.Builder
	b.WriteString(classifyInstructions)
	b.WriteString("\n\n")
	if context != "" {
		b.WriteString(context)
		b.WriteString("\n\n")
	}
	b.WriteString("Request: ")
	b.WriteString(message)
	return b.String()
}

// StepPrompt asks for one plan step, given the original task and what the
// previous steps produced. The step itself is the last line.
func StepPrompt(task string, steps []string, results []string, index int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Original task: %s\n\nYou are carrying out this plan of %d steps:\n", task, len(steps))
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	if len(results) > 0 {
		b.WriteString("\nResults so far:\n")
		for i, r := range results {
			fmt.Fprintf(&b, "Step %d (%s): %s\n", i+1, steps[i], strings.TrimSpace(r))
		}
	}
	fmt.Fprintf(&b, "\nDo only this step now and report what you did.\nStep %d of %d: %s", index, len(steps), oneLine(steps[index-1]))
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
