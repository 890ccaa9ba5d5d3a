package tgtext

import (
	"regexp"
	"strings"
	"testing"
)

// Nesting and the model's mistakes, parsed as CommonMark: the output is
// always Telegram HTML of the allowed tags.
func TestMarkdownToHTMLNesting(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bold inside italic", "*it **b** it*", "<i>it <b>b</b> it</i>"},
		{"italic inside bold inside strike", "~~a **b _c_**~~", "<s>a <b>b <i>c</i></b></s>"},
		{"code inside list items", "- run `ls <dir>`\n- then `cd`", "• run <code>ls &lt;dir&gt;</code>\n• then <code>cd</code>"},
		{"code fence inside a list item", "1. build:\n\n   ```sh\n   go build\n   ```\n2. run", "1. build:\n\n<pre><code class=\"language-sh\">go build</code></pre>\n\n2. run"},
		{"nested ordered list", "1. one\n   - a\n   - b\n2. two", "1. one\n  • a\n  • b\n2. two"},
		{"link with parentheses", "[Go](https://en.wikipedia.org/wiki/Go_(programming_language))", `<a href="https://en.wikipedia.org/wiki/Go_(programming_language)">Go</a>`},
		{"link with code label", "[`x`](https://x.io)", `<a href="https://x.io"><code>x</code></a>`},
		{"autolink", "<https://x.io/?a=1&b=2>", `<a href="https://x.io/?a=1&amp;b=2">https://x.io/?a=1&amp;b=2</a>`},
		{"unclosed bold and italic", "**open *and more", "**open *and more"},
		{"unclosed code span", "`open code", "`open code"},
		{"unclosed strike", "~~open", "~~open"},
		{"inline html escaped", `<b>x</b> <a href="y">z</a> <tg-spoiler>s</tg-spoiler>`, `&lt;b&gt;x&lt;/b&gt; &lt;a href="y"&gt;z&lt;/a&gt; &lt;tg-spoiler&gt;s&lt;/tg-spoiler&gt;`},
		{"html block escaped", "<div>\n<script>alert(1)</script>\n</div>", "&lt;div&gt;\n&lt;script&gt;alert(1)&lt;/script&gt;\n&lt;/div&gt;"},
		{"entities resolved then escaped", "a &amp; b &lt; c &#169;", "a &amp; b &lt; c ©"},
		{"quote with bold", "> quoted **bold**\n> more", "<blockquote>quoted <b>bold</b>\nmore</blockquote>"},
		{"nested quote joins the outer one", "> a\n>> b", "<blockquote>a\nb</blockquote>"},
		{"heading keeps inner emphasis", "## Plan *today*", "<b>Plan <i>today</i></b>"},
		{
			"table as an aligned monospace block",
			"| Name | Qty |\n|:-----|----:|\n| Ann & <Co> | **30** |\n| Bob | 4 |",
			"<pre>Name       | Qty\n-----------+----\nAnn &amp; &lt;Co&gt; | 30\nBob        | 4</pre>",
		},
		{"empty label shows the address", "[](https://x.io)", `<a href="https://x.io">https://x.io</a>`},
		{"unsupported scheme as text", "[run](javascript:x()) [](ftp://h)", "run (javascript:x()) ftp://h"},
		{"image as its link", "![a chart](https://x.io/c.png)", `<a href="https://x.io/c.png">a chart</a>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MarkdownToHTML(tt.in)
			if got != tt.want {
				t.Errorf("MarkdownToHTML(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if err := wellFormed(got); err != "" {
				t.Errorf("%s in %q", err, got)
			}
		})
	}
}

// FuzzMarkdownToHTML: whatever the model writes, the output uses only
// the tags Telegram allows, balanced and nested as Telegram accepts, and
// every chunk of it is well-formed too.
func FuzzMarkdownToHTML(f *testing.F) {
	for _, s := range []string{
		"**bold *it* bold**", "```go\nx < y\n```", "| a | b |\n|---|---|\n| 1 | 2 |",
		"- a\n  - b\n    1. c", "> q\n>> qq", "[x](https://a.b/(c))", "<b>x</b>&amp;&", "~~s~~ `c` _i_",
		"# h *i*\n***\n", "1. a\n\n   ```\n   b\n   ```", "<https://x.io>", "![i](tg://x)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := MarkdownToHTML(md)
		if err := wellFormed(out); err != "" {
			t.Fatalf("%s\nmarkdown %q\nhtml %q", err, md, out)
		}
		for _, c := range Chunk(out, 200) {
			if err := wellFormed(c); err != "" {
				t.Fatalf("chunk: %s\nmarkdown %q\nchunk %q", err, md, c)
			}
		}
	})
}

var (
	openTagRe = regexp.MustCompile(`^<(b|i|s|u|code|pre|blockquote|tg-spoiler|a href="[^"<>]*"|code class="language-[A-Za-z0-9_+#.-]+")>`)
	closeRe   = regexp.MustCompile(`^</(b|i|s|u|code|pre|a|blockquote|tg-spoiler)>`)
	entityRe  = regexp.MustCompile(`^&(amp|lt|gt|quot|#[0-9]{1,7});`)
)

// wellFormed returns what is wrong with s as Telegram HTML, or "".
func wellFormed(s string) string {
	var stack []string
	for i := 0; i < len(s); {
		rest := s[i:]
		switch s[i] {
		case '<':
			if m := closeRe.FindStringSubmatch(rest); m != nil {
				if len(stack) == 0 || stack[len(stack)-1] != m[1] {
					return "unmatched </" + m[1] + ">"
				}
				stack = stack[:len(stack)-1]
				i += len(m[0])
				continue
			}
			m := openTagRe.FindStringSubmatch(rest)
			if m == nil {
				return "a < that is not an allowed tag"
			}
			name, _, _ := strings.Cut(m[1], " ")
			if msg := nesting(stack, name); msg != "" {
				return msg
			}
			stack = append(stack, name)
			i += len(m[0])
		case '>':
			return "an unescaped >"
		case '&':
			m := entityRe.FindString(rest)
			if m == "" {
				return "an unescaped &"
			}
			i += len(m)
		default:
			i++
		}
	}
	if len(stack) > 0 {
		return "unclosed " + strings.Join(stack, ",")
	}
	return ""
}

// nesting applies Telegram's rules: nothing inside code, only code
// inside pre, no blockquote inside a blockquote, no block inside inline.
func nesting(stack []string, name string) string {
	for _, open := range stack {
		switch {
		case open == "code":
			return "<" + name + "> inside <code>"
		case open == "pre" && name != "code":
			return "<" + name + "> inside <pre>"
		case open == name && (name == "blockquote" || name == "a" || name == "pre"):
			return "nested <" + name + ">"
		case (name == "pre" || name == "blockquote") && open != "blockquote":
			return "<" + name + "> inside <" + open + ">"
		}
	}
	return ""
}
