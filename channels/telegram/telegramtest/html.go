package telegramtest

import (
	"fmt"
	"html"
	"strings"
	"unicode/utf16"
)

// allowedTags is the tag set of the Bot API's HTML parse mode.
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "code": true, "pre": true, "blockquote": true, "tg-emoji": true,
}

var namedEntities = map[string]string{"lt": "<", "gt": ">", "amp": "&", "quot": `"`}

// parseHTML validates text the way the Bot API's HTML parse mode does and
// returns the visible text. Errors are worded like the real API's
// "can't parse entities" descriptions.
func parseHTML(s string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("Unclosed start tag at byte offset %d", i) //nolint:staticcheck // Telegram\'s own wording
			}
			tag := s[i+1 : i+end]
			if strings.HasPrefix(tag, "/") {
				name := strings.TrimSpace(tag[1:])
				if len(stack) == 0 {
					return "", fmt.Errorf("Unexpected end tag at byte offset %d", i) //nolint:staticcheck // Telegram\'s own wording
				}
				if stack[len(stack)-1] != name {
					return "", fmt.Errorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, stack[len(stack)-1], name) //nolint:staticcheck // Telegram\'s own wording
				}
				stack = stack[:len(stack)-1]
			} else {
				name, attrs, _ := strings.Cut(tag, " ")
				if !allowedTags[name] {
					return "", fmt.Errorf("Unsupported start tag \"%s\" at byte offset %d", name, i) //nolint:staticcheck // Telegram\'s own wording //nolint:staticcheck // Telegram\'s own wording
				}
				if err := checkNesting(stack, name, i); err != nil {
					return "", err
				}
				if strings.Count(attrs, `"`)%2 != 0 {
					return "", fmt.Errorf("Unclosed start tag at byte offset %d", i) //nolint:staticcheck // Telegram\'s own wording
				}
				stack = append(stack, name)
			}
			i += end + 1
		case '&':
			text, n, err := entity(s[i:], i)
			if err != nil {
				return "", err
			}
			out.WriteString(text)
			i += n
		case '>':
			// The real API tolerates a bare '>' in text.
			out.WriteByte('>')
			i++
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1]) //nolint:staticcheck // Telegram\'s own wording
	}
	return out.String(), nil
}

func checkNesting(stack []string, name string, offset int) error {
	if len(stack) == 0 {
		return nil
	}
	parent := stack[len(stack)-1]
	switch {
	case parent == "code":
		return fmt.Errorf("Unsupported start tag \"%s\" inside \"code\" at byte offset %d", name, offset) //nolint:staticcheck // Telegram\'s own wording
	case parent == "pre" && name != "code":
		return fmt.Errorf("Unsupported start tag \"%s\" inside \"pre\" at byte offset %d", name, offset) //nolint:staticcheck // Telegram\'s own wording
	}
	return nil
}

// entity decodes the HTML entity at the start of s. Like the real API, a
// '&' that does not start an entity is kept literally, but an unknown
// named entity is an error.
func entity(s string, offset int) (string, int, error) {
	end := strings.IndexByte(s, ';')
	if end < 0 || end > 10 || strings.ContainsAny(s[1:end], " \t\n&<") {
		return "&", 1, nil
	}
	name := s[1:end]
	if strings.HasPrefix(name, "#") {
		decoded := html.UnescapeString(s[:end+1])
		if decoded == s[:end+1] {
			return "", 0, fmt.Errorf("Unsupported HTML entity \"%s\" at byte offset %d", s[:end+1], offset) //nolint:staticcheck // Telegram\'s own wording
		}
		return decoded, end + 1, nil
	}
	text, ok := namedEntities[name]
	if !ok {
		return "", 0, fmt.Errorf("Unsupported HTML entity \"%s\" at byte offset %d", s[:end+1], offset) //nolint:staticcheck // Telegram\'s own wording
	}
	return text, end + 1, nil
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}
