package email

import (
	"regexp"
	"strings"
)

// Where the quoted history starts in a reply: "On <date>, <someone>
// wrote:" (possibly wrapped over two lines), Outlook's separators.
var (
	wroteLine   = regexp.MustCompile(`(?i)^\s*(on|am|le|el|il|op)\s.*(wrote|schrieb|a écrit|escribió|ha scritto|schreef)(\s.*)?:\s*$`)
	historyLine = regexp.MustCompile(`(?i)^\s*(-{2,}\s*original message\s*-{2,}|_{20,}|-{5,}\s*forwarded message\s*-{5,})\s*$`)
)

// stripQuoted returns the new text of a reply: everything from the
// signature delimiter ("-- ") or the quoted history's introduction on is
// dropped, and so is every quoted ("> ") line.
func stripQuoted(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var kept []string
	for i, line := range lines {
		if endsNewText(lines, i) {
			break
		}
		if strings.HasPrefix(strings.TrimLeft(line, " "), ">") {
			continue
		}
		kept = append(kept, strings.TrimRight(line, " \t"))
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}

// endsNewText reports whether the new text ends before lines[i].
func endsNewText(lines []string, i int) bool {
	line := lines[i]
	if line == "-- " || line == "--" || historyLine.MatchString(line) || wroteLine.MatchString(line) {
		return true
	}
	// "On Mon, 1 Jan 2026 at 10:00, Alice <alice@example.com>\nwrote:"
	if i+1 < len(lines) && wroteLine.MatchString(line+" "+lines[i+1]) && strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "on ") {
		return true
	}
	return false
}
