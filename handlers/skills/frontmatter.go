package skills

import (
	"fmt"
	"strconv"
	"strings"
)

// The front matter of a SKILL.md is a small subset of YAML, parsed here
// rather than with a YAML library (none is in go.mod): "key: value"
// pairs, nested maps by indentation, lists as "[a, b]" or "- item" lines
// (items may be maps), plain, 'single' or "double" quoted scalars, and
// "#" comments. Anything else is an error naming its line. A flow map
// ("{...}") is kept as its raw text, so that keys omega does not use
// (nanobot's metadata) do not fail a skill.

// ParseError is a front matter or SKILL.md error at a line of a file.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// yline is one meaningful line: its number (1-based, in the file), its
// indentation and its text without the indentation.
type yline struct {
	num    int
	indent int
	text   string
}

// node is a parsed value: a string, a list or a map, with the line it
// started on.
type node struct {
	line int
	str  string
	list []node
	keys []string
	vals map[string]node
	kind byte // 's', 'l', 'm'
}

type fmParser struct {
	lines []yline
	i     int
}

// parseFrontMatter parses the lines between the "---" fences; first is
// the file line number of the first of them.
func parseFrontMatter(text string, first int) (node, error) {
	p := &fmParser{}
	for i, raw := range strings.Split(text, "\n") {
		num := first + i
		trimmed := strings.TrimRight(raw, " \r")
		body := strings.TrimLeft(trimmed, " ")
		if body == "" || strings.HasPrefix(body, "#") {
			continue
		}
		if strings.HasPrefix(body, "\t") || strings.Contains(trimmed[:len(trimmed)-len(body)], "\t") {
			return node{}, &ParseError{Line: num, Msg: "tabs are not allowed for indentation"}
		}
		p.lines = append(p.lines, yline{num: num, indent: len(trimmed) - len(body), text: stripComment(body)})
	}
	if len(p.lines) == 0 {
		return node{kind: 'm', vals: map[string]node{}}, nil
	}
	if p.lines[0].indent != 0 {
		return node{}, &ParseError{Line: p.lines[0].num, Msg: "the front matter must start at column 1"}
	}
	n, err := p.block(0)
	if err != nil {
		return node{}, err
	}
	if p.i < len(p.lines) {
		l := p.lines[p.i]
		return node{}, &ParseError{Line: l.num, Msg: "unexpected indentation"}
	}
	if n.kind != 'm' {
		return node{}, &ParseError{Line: n.line, Msg: "the front matter must be key: value pairs"}
	}
	return n, nil
}

// stripComment removes a " #" comment outside quotes.
func stripComment(s string) string {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '#' && i > 0 && s[i-1] == ' ':
			return strings.TrimRight(s[:i], " ")
		}
	}
	return s
}

func isItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// block parses the lines at indent: a list when they start with "-",
// else a map.
func (p *fmParser) block(indent int) (node, error) {
	if isItem(p.lines[p.i].text) {
		return p.list(indent)
	}
	return p.mapping(indent)
}

func (p *fmParser) list(indent int) (node, error) {
	n := node{kind: 'l', line: p.lines[p.i].num}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent && isItem(p.lines[p.i].text) {
		l := p.lines[p.i]
		item := strings.TrimSpace(strings.TrimPrefix(l.text, "-"))
		var (
			v   node
			err error
		)
		switch {
		case item == "":
			p.i++
			v, err = p.nested(indent, l.num)
		case keyOf(item) != "":
			// "- key: value" starts a map whose keys line up with "key".
			p.lines[p.i] = yline{num: l.num, indent: indent + len(l.text) - len(item), text: item}
			v, err = p.mapping(p.lines[p.i].indent)
		default:
			p.i++
			v, err = scalar(item, l.num)
		}
		if err != nil {
			return node{}, err
		}
		n.list = append(n.list, v)
	}
	return n, nil
}

// nested parses the block under a line at indent, or an empty string
// when none follows.
func (p *fmParser) nested(indent, num int) (node, error) {
	if p.i < len(p.lines) && p.lines[p.i].indent > indent {
		return p.block(p.lines[p.i].indent)
	}
	return node{kind: 's', line: num}, nil
}

// keyOf returns the key of a "key: value" or "key:" text, or "". A key
// is letters, digits, "_", "-" and ".".
func keyOf(text string) string {
	k, rest, ok := strings.Cut(text, ":")
	if !ok || k == "" || (rest != "" && rest[0] != ' ') {
		return "" // "http://x" is not a key
	}
	for _, r := range k {
		if !keyRune(r) {
			return ""
		}
	}
	return k
}

func keyRune(r rune) bool {
	return r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

func (p *fmParser) mapping(indent int) (node, error) {
	n := node{kind: 'm', line: p.lines[p.i].num, vals: map[string]node{}}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent {
		l := p.lines[p.i]
		key := keyOf(l.text)
		if key == "" {
			return node{}, &ParseError{Line: l.num, Msg: fmt.Sprintf("expected \"key: value\", got %q", l.text)}
		}
		if _, dup := n.vals[key]; dup {
			return node{}, &ParseError{Line: l.num, Msg: fmt.Sprintf("duplicate key %q", key)}
		}
		rest := strings.TrimSpace(l.text[strings.Index(l.text, ":")+1:])
		p.i++
		var (
			v   node
			err error
		)
		switch {
		case rest != "":
			v, err = scalar(rest, l.num)
		case p.i < len(p.lines) && p.lines[p.i].indent == indent && isItem(p.lines[p.i].text):
			v, err = p.list(indent) // a list may sit at its key's indentation
		default:
			v, err = p.nested(indent, l.num)
		}
		if err != nil {
			return node{}, err
		}
		n.keys = append(n.keys, key)
		n.vals[key] = v
	}
	if p.i < len(p.lines) && p.lines[p.i].indent > indent {
		return node{}, &ParseError{Line: p.lines[p.i].num, Msg: "unexpected indentation"}
	}
	return n, nil
}

// scalar parses an inline value: a flow list, a quoted or plain string.
func scalar(s string, num int) (node, error) {
	switch {
	case strings.HasPrefix(s, "["):
		return flowList(s, num)
	case strings.HasPrefix(s, "|") || strings.HasPrefix(s, ">"):
		return node{}, &ParseError{Line: num, Msg: "block scalars (| and >) are not supported: write the value on one line"}
	case strings.HasPrefix(s, "{"):
		return node{kind: 's', line: num, str: s}, nil
	}
	v, err := unquote(s)
	if err != nil {
		return node{}, &ParseError{Line: num, Msg: err.Error()}
	}
	return node{kind: 's', line: num, str: v}, nil
}

func unquote(s string) (string, error) {
	switch {
	case strings.HasPrefix(s, "\""):
		v, err := strconv.Unquote(s)
		if err != nil {
			return "", fmt.Errorf("bad double-quoted string %s", s)
		}
		return v, nil
	case strings.HasPrefix(s, "'"):
		if len(s) < 2 || !strings.HasSuffix(s, "'") {
			return "", fmt.Errorf("unterminated single-quoted string %s", s)
		}
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	}
	return s, nil
}

// flowList parses "[a, 'b', "c, d"]".
func flowList(s string, num int) (node, error) {
	if !strings.HasSuffix(s, "]") {
		return node{}, &ParseError{Line: num, Msg: "unterminated list: missing ]"}
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	n := node{kind: 'l', line: num}
	if inner == "" {
		return n, nil
	}
	var (
		items []string
		cur   strings.Builder
		quote rune
	)
	for _, r := range inner {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '[' || r == '{':
			return node{}, &ParseError{Line: num, Msg: "nested lists and maps are not supported inside [ ]"}
		case r == ',':
			items = append(items, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	if quote != 0 {
		return node{}, &ParseError{Line: num, Msg: "unterminated quoted string in list"}
	}
	items = append(items, cur.String())
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			return node{}, &ParseError{Line: num, Msg: "empty list item"}
		}
		v, err := unquote(it)
		if err != nil {
			return node{}, &ParseError{Line: num, Msg: err.Error()}
		}
		n.list = append(n.list, node{kind: 's', line: num, str: v})
	}
	return n, nil
}
