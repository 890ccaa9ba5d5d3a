package i18n

import "strings"

// MenuEntry is one command as a chat app's command menu shows it.
type MenuEntry struct {
	Command     string // without the slash
	Description string
}

// helpLines splits lang's Help text into its heading and one line per
// command ("/name <args> — description").
func helpLines(lang string) (heading string, lines []string) {
	all := strings.Split(Text(lang, Help), "\n")
	return all[0], all[1:]
}

// commandOf is the command a help line describes, without the slash.
func commandOf(line string) string {
	word, _, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	return word
}

// HelpWithout is lang's Help text without the commands in hide (those of
// a channel that is off).
func HelpWithout(lang string, hide ...string) string {
	heading, lines := helpLines(lang)
	out := []string{heading}
	for _, l := range lines {
		if !contains(hide, commandOf(l)) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Menu is lang's command menu, from the same lines as its Help text,
// without the commands in hide. A command that takes an argument keeps
// it in its description ("<id> — cancel a task").
func Menu(lang string, hide ...string) []MenuEntry {
	_, lines := helpLines(lang)
	out := make([]MenuEntry, 0, len(lines))
	for _, l := range lines {
		cmd := commandOf(l)
		if cmd == "" || contains(hide, cmd) {
			continue
		}
		args, desc, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "/"), cmd)), "— ")
		if !ok {
			continue
		}
		if args = strings.TrimSpace(args); args != "" {
			desc = args + " — " + desc
		}
		out = append(out, MenuEntry{Command: cmd, Description: strings.TrimSpace(desc)})
	}
	return out
}

// Code is lang's ISO 639-1 code, as chat apps name a user's language
// (Telegram's language_code).
func Code(lang string) string {
	return codes[OrDefault(lang)]
}

var codes = map[string]string{English: "en", Spanish: "es", Portuguese: "pt", French: "fr", German: "de", Italian: "it", Dutch: "nl", Russian: "ru"}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
