package skills

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The front matter of a SKILL.md is YAML, read by a YAML library so that
// what users write elsewhere (block lists, quoted strings, multi-line |
// and > strings, folded plain strings, comments, anchors) means the same
// here. The document is turned into a small tree of strings, lists and
// maps with the line each started on, so that the checks in skill.go can
// name the line of a bad value. Every scalar keeps its text as written
// ("yes" and "08080" stay strings).

// ParseError is a front matter or SKILL.md error at a line of a file.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
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

// parseFrontMatter parses the lines between the "---" fences; first is
// the file line number of the first of them.
func parseFrontMatter(text string, first int) (node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return node{}, yamlError(err, text, first)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return node{kind: 'm', vals: map[string]node{}}, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return node{}, &ParseError{Line: first + root.Line - 1, Msg: "the front matter must be key: value pairs"}
	}
	c := &converter{first: first, left: maxNodes}
	return c.convert(root, 0)
}

// maxDepth and maxNodes bound alias expansion: an alias that refers to
// itself, or aliases of aliases that multiply ("billion laughs"), must
// fail, not loop or fill the memory.
const (
	maxDepth = 32
	maxNodes = 10_000
	tooMuch  = "the front matter nests too deep or repeats too much"
)

// converter turns YAML nodes into nodes; lines become file lines (first
// is the file line of the front matter's first line).
type converter struct {
	first int
	left  int // nodes still allowed
}

func (c *converter) convert(y *yaml.Node, depth int) (node, error) {
	line := c.first + y.Line - 1
	c.left--
	if depth > maxDepth || c.left < 0 {
		return node{}, &ParseError{Line: line, Msg: tooMuch}
	}
	switch y.Kind {
	case yaml.AliasNode:
		v, err := c.convert(y.Alias, depth+1)
		if pe := (*ParseError)(nil); errors.As(err, &pe) && pe.Msg == tooMuch {
			pe.Line = line // the outermost alias that blew up, not its anchor
		}
		return v, err
	case yaml.SequenceNode:
		n := node{kind: 'l', line: line}
		for _, item := range y.Content {
			v, err := c.convert(item, depth+1)
			if err != nil {
				return node{}, err
			}
			n.list = append(n.list, v)
		}
		return n, nil
	case yaml.MappingNode:
		return c.convertMap(y, depth)
	}
	if y.Tag == "!!null" && y.Style == 0 {
		return node{kind: 's', line: line}, nil // "key:" or "key: ~"
	}
	return node{kind: 's', line: line, str: y.Value}, nil
}

func (c *converter) convertMap(y *yaml.Node, depth int) (node, error) {
	n := node{kind: 'm', line: c.first + y.Line - 1, vals: map[string]node{}}
	for i := 0; i+1 < len(y.Content); i += 2 {
		k := y.Content[i]
		keyLine := c.first + k.Line - 1
		if k.Kind != yaml.ScalarNode {
			return node{}, &ParseError{Line: keyLine, Msg: "a key must be a plain name"}
		}
		if _, dup := n.vals[k.Value]; dup {
			return node{}, &ParseError{Line: keyLine, Msg: fmt.Sprintf("duplicate key %q", k.Value)}
		}
		v, err := c.convert(y.Content[i+1], depth+1)
		if err != nil {
			return node{}, err
		}
		if v.kind == 's' && v.str == "" && v.line < keyLine {
			v.line = keyLine
		}
		n.keys = append(n.keys, k.Value)
		n.vals[k.Value] = v
	}
	return n, nil
}

// yamlErrRe reads the library's "yaml: line N: problem" message.
var yamlErrRe = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlHints say in the words of a skill's author what the library's
// message means for a front matter; the library's text follows.
var yamlHints = []struct{ problem, hint string }{
	{"could not find expected ':'", `expected "key: value"`},
	{"mapping values are not allowed", `unexpected indentation, or a value containing ": " that needs quotes`},
	{"did not find expected ',' or ']'", "unterminated list: missing ]"},
	{"did not find expected ',' or '}'", "unterminated map: missing }"},
	{"found unexpected end of stream", "unterminated quoted string"},
}

// yamlError turns the library's error into a ParseError at a file line.
// The library counts lines from 1 for scanner errors but from 0 for
// parser errors ("did not find expected ..."), and leaves the line out
// on the first line; this undoes both.
func yamlError(err error, text string, first int) error {
	m := yamlErrRe.FindStringSubmatch(err.Error())
	if m == nil {
		return &ParseError{Line: first, Msg: "invalid YAML: " + err.Error()}
	}
	rel, _ := strconv.Atoi(m[1])
	problem := m[2]
	if strings.HasPrefix(problem, "did not find expected") {
		rel++
	}
	rel = max(rel, 1)
	msg := "invalid YAML: " + problem
	if lines := strings.Split(text, "\n"); rel <= len(lines) && strings.Contains(leadingSpace(lines[rel-1]), "\t") {
		msg = "tabs are not allowed for indentation (" + msg + ")"
	}
	for _, h := range yamlHints {
		if strings.HasPrefix(problem, h.problem) {
			msg = h.hint + " (" + msg + ")"
			break
		}
	}
	return &ParseError{Line: first + rel - 1, Msg: msg}
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}
