package postgres

import (
	"strings"
	"unicode"
)

// redactKeyValue rewrites a key=value DSN ("host=h password='x y'") with
// the password replaced. Anything it cannot parse is hidden entirely.
func redactKeyValue(dsn string) string {
	pairs, ok := parseKeyValue(dsn)
	if !ok {
		return "(unparseable DSN)"
	}
	var b strings.Builder
	for i, kv := range pairs {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := kv[1]
		if strings.EqualFold(kv[0], "password") {
			v = "xxxxx"
		}
		b.WriteString(kv[0])
		b.WriteByte('=')
		b.WriteString(quoteValue(v))
	}
	return b.String()
}

// parseKeyValue follows libpq's rules: values may be single-quoted, and a
// backslash escapes the next character.
func parseKeyValue(s string) ([][2]string, bool) {
	var pairs [][2]string
	r := []rune(s)
	i := 0
	skipSpace := func() {
		for i < len(r) && unicode.IsSpace(r[i]) {
			i++
		}
	}
	for {
		skipSpace()
		if i == len(r) {
			return pairs, true
		}
		start := i
		for i < len(r) && r[i] != '=' && !unicode.IsSpace(r[i]) {
			i++
		}
		key := string(r[start:i])
		skipSpace()
		if key == "" || i == len(r) || r[i] != '=' {
			return nil, false
		}
		i++
		skipSpace()
		val, next, ok := readValue(r, i)
		if !ok {
			return nil, false
		}
		i = next
		pairs = append(pairs, [2]string{key, val})
	}
}

// readValue reads one value starting at r[i], quoted or bare, and returns
// it with the index after it.
func readValue(r []rune, i int) (string, int, bool) {
	var val strings.Builder
	quoted := i < len(r) && r[i] == '\''
	if quoted {
		i++
	}
	for i < len(r) {
		c := r[i]
		if quoted && c == '\'' {
			return val.String(), i + 1, true
		}
		if !quoted && unicode.IsSpace(c) {
			break
		}
		if c == '\\' {
			i++
			if i == len(r) {
				return "", 0, false
			}
			c = r[i]
		}
		val.WriteRune(c)
		i++
	}
	return val.String(), i, !quoted // an unclosed quote is malformed
}

func quoteValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n'\\") {
		return v
	}
	v = strings.ReplaceAll(v, `\`, `\\`)
	v = strings.ReplaceAll(v, `'`, `\'`)
	return "'" + v + "'"
}
