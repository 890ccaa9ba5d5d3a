package telegram

import (
	"html"
	"regexp"
	"strings"
)

// Telegram's HTML parse mode accepts a small tag set and rejects anything
// else, so the model's Markdown is converted by a deliberately small,
// line-oriented converter. Every construct is emitted as a matched pair
// of tags, so the output is always well-formed even when the Markdown is
// not; unmatched delimiters are kept as literal text.

var (
	fenceRe    = regexp.MustCompile("^ {0,3}(```+|~~~+)\\s*([^`\\s]*)")
	headingRe  = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	bulletRe   = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	numberedRe = regexp.MustCompile(`^(\s*)(\d{1,9})[.)]\s+(.*)$`)
	ruleRe     = regexp.MustCompile(`^ {0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
	langRe     = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)
)

// MarkdownToHTML converts the model's Markdown to Telegram HTML: bold,
// italic, strikethrough, inline code, fenced code blocks, links, headings
// (bold lines), bullet lists ("• " lines) and numbered lists (kept as
// "1. " lines, since the numbers usually carry meaning). All other <, >
// and & are escaped.
func MarkdownToHTML(md string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			block, next := codeBlock(lines, i+1, m[1], m[2])
			out = append(out, block)
			i = next
			continue
		}
		out = append(out, blockLine(line))
	}
	return strings.Join(out, "\n")
}

// codeBlock renders the fenced block whose body starts at lines[start]
// and returns the index of its closing fence (or the last line).
func codeBlock(lines []string, start int, fence, lang string) (string, int) {
	end := len(lines)
	for j := start; j < len(lines); j++ {
		if strings.HasPrefix(strings.TrimLeft(lines[j], " "), fence[:3]) &&
			strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[j]), fence[:1])) == "" {
			end = j
			break
		}
	}
	body := escapeText(strings.Join(lines[start:end], "\n"))
	open := "<pre><code>"
	if langRe.MatchString(lang) {
		open = `<pre><code class="language-` + lang + `">`
	}
	if end == len(lines) {
		end = len(lines) - 1
	}
	return open + body + "</code></pre>", end
}

func blockLine(line string) string {
	if m := headingRe.FindStringSubmatch(line); m != nil {
		if m[1] == "" {
			return ""
		}
		return "<b>" + inlineHTML(m[1]) + "</b>"
	}
	if ruleRe.MatchString(line) {
		return "──────────"
	}
	if m := bulletRe.FindStringSubmatch(line); m != nil {
		return m[1] + "• " + inlineHTML(m[2])
	}
	if m := numberedRe.FindStringSubmatch(line); m != nil {
		return m[1] + m[2] + ". " + inlineHTML(m[3])
	}
	return inlineHTML(line)
}

// textEscaper escapes only what Telegram requires outside attributes;
// quotes stay literal, which keeps messages shorter.
var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func escapeText(s string) string { return textEscaper.Replace(s) }

// inlineHTML converts inline Markdown (one line) to HTML.
func inlineHTML(s string) string {
	var b strings.Builder
	text := func(t string) { b.WriteString(escapeText(t)) }
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			text(s[i+1 : i+2])
			i += 2
			continue
		case c == '`':
			if n, code, ok := codeSpan(s, i); ok {
				b.WriteString("<code>" + escapeText(code) + "</code>")
				i = n
				continue
			}
		case c == '[':
			if n, label, url, ok := link(s, i); ok {
				b.WriteString(renderLink(label, url))
				i = n
				continue
			}
		case c == '*' || c == '_' || c == '~':
			if n, tag, inner, ok := emphasis(s, i); ok {
				b.WriteString("<" + tag + ">" + inlineHTML(inner) + "</" + tag + ">")
				i = n
				continue
			}
		}
		// Copy a run of ordinary characters in one go.
		j := i + 1
		for j < len(s) && !strings.ContainsRune("\\`[*_~", rune(s[j])) {
			j++
		}
		text(s[i:j])
		i = j
	}
	return b.String()
}

func isPunct(c byte) bool {
	return strings.IndexByte("\\`*_{}[]()#+-.!~|>", c) >= 0
}

// codeSpan matches a run of n backticks closed by a run of exactly n.
func codeSpan(s string, i int) (next int, code string, ok bool) {
	n := runLen(s, i, '`')
	for j := i + n; j < len(s); {
		k := strings.IndexByte(s[j:], '`')
		if k < 0 {
			return 0, "", false
		}
		j += k
		m := runLen(s, j, '`')
		if m == n {
			code = s[i+n : j]
			if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' {
				code = code[1 : len(code)-1]
			}
			return j + m, code, code != ""
		}
		j += m
	}
	return 0, "", false
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// link matches [label](url).
func link(s string, i int) (next int, label, url string, ok bool) {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth > 0 {
				continue
			}
			if j+1 >= len(s) || s[j+1] != '(' {
				return 0, "", "", false
			}
			end := strings.IndexByte(s[j+2:], ')')
			if end < 0 {
				return 0, "", "", false
			}
			url = strings.TrimSpace(s[j+2 : j+2+end])
			if url == "" || strings.ContainsAny(url, " \t") {
				return 0, "", "", false
			}
			return j + 2 + end + 1, s[i+1 : j], url, true
		}
	}
	return 0, "", "", false
}

// renderLink emits a link only for schemes Telegram accepts; anything
// else is shown as text so the message is not rejected.
func renderLink(label, url string) string {
	lower := strings.ToLower(url)
	for _, scheme := range []string{"http://", "https://", "tg://", "mailto:"} {
		if strings.HasPrefix(lower, scheme) {
			return `<a href="` + html.EscapeString(url) + `">` + inlineHTML(label) + "</a>"
		}
	}
	return inlineHTML(label) + " (" + escapeText(url) + ")"
}

// emphasis matches **bold**, __bold__, *italic*, _italic_ and ~~strike~~.
func emphasis(s string, i int) (next int, tag, inner string, ok bool) {
	c := s[i]
	run := runLen(s, i, c)
	var delim string
	switch {
	case c == '~' && run >= 2:
		delim, tag = "~~", "s"
	case c == '~':
		return 0, "", "", false
	case run >= 2:
		delim, tag = s[i:i+2], "b"
	default:
		delim, tag = s[i:i+1], "i"
	}
	open := i + len(delim)
	if open >= len(s) || s[open] == ' ' || s[open] == '\t' {
		return 0, "", "", false
	}
	if c == '_' && i > 0 && isWordByte(s[i-1]) {
		return 0, "", "", false // snake_case is not emphasis
	}
	closeAt := findCloser(s, open, delim)
	if closeAt < 0 {
		return 0, "", "", false
	}
	return closeAt + len(delim), tag, s[open:closeAt], true
}

// findCloser returns the index of the delimiter closing an emphasis that
// opened just before from, skipping code spans.
func findCloser(s string, from int, delim string) int {
	c := delim[0]
	for j := from; j < len(s); j++ {
		if s[j] == '`' {
			if n, _, ok := codeSpan(s, j); ok {
				j = n - 1
			}
			continue
		}
		if s[j] != c || j == from {
			continue
		}
		run := runLen(s, j, c)
		if s[j-1] == ' ' || s[j-1] == '\t' {
			j += run - 1
			continue
		}
		end := j + run // first byte after the run
		switch {
		case len(delim) == 1 && run == 2:
			// "**" inside an italic span opens or closes bold, not italic.
			j = end - 1
			continue
		case run > len(delim):
			// "***": the closer is the tail of the run.
			j = end - len(delim)
		case run < len(delim):
			continue
		}
		if c == '_' && end < len(s) && isWordByte(s[end]) {
			j = end - 1
			continue
		}
		return j
	}
	return -1
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
