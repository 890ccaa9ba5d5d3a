package claudecode

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"
)

// toolTargetMax bounds Delta.ToolTarget: a person reads it in a one-line
// preview, so a long path keeps its end and a long command its start.
const toolTargetMax = 60

// commandWords is how many words of a shell command a target keeps: enough
// to say what runs ("go test ./..."), too few for most arguments.
const commandWords = 3

// toolTarget is a short summary of a tool's input for a person watching
// the agent work: the file, the search pattern, the first words of a
// command or the host and path of a URL. It keeps nothing that commonly
// carries a secret: no assignment (TOKEN=...), no quoted argument, no URL
// query or user info. Empty when the input says nothing readable.
func toolTarget(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	str := func(k string) string {
		s, _ := in[k].(string)
		return strings.TrimSpace(s)
	}
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if s := str(k); s != "" {
			return shortenPath(s)
		}
	}
	if s := str("command"); s != "" {
		return shortenStart(firstWords(s))
	}
	if s := str("url"); s != "" {
		return shortenStart(safeURL(s))
	}
	for _, k := range []string{"pattern", "query", "description"} {
		if s := str(k); s != "" {
			return shortenStart(firstLine(s))
		}
	}
	return ""
}

// firstWords keeps the leading words of a command up to the first one that
// may carry a value worth hiding.
func firstWords(cmd string) string {
	var kept []string
	for _, w := range strings.Fields(firstLine(cmd)) {
		if len(kept) == commandWords || strings.ContainsAny(w, "=\"'`$@:") {
			break
		}
		kept = append(kept, w)
	}
	return strings.Join(kept, " ")
}

// safeURL is scheme, host and path only; an unparseable URL yields nothing.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// shortenStart keeps the start of s, marking a cut with an ellipsis.
func shortenStart(s string) string {
	if utf8.RuneCountInString(s) <= toolTargetMax {
		return s
	}
	r := []rune(s)
	return string(r[:toolTargetMax-1]) + "…"
}

// shortenPath keeps the end of a path, where the file's name is.
func shortenPath(s string) string {
	if utf8.RuneCountInString(s) <= toolTargetMax {
		return s
	}
	r := []rune(s)
	return "…" + string(r[len(r)-toolTargetMax+1:])
}
