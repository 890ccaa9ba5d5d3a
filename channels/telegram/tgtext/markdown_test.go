package tgtext

import "testing"

func TestMarkdownToHTML(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello world", "hello world"},
		{"escaping", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"html in text is escaped", "<script>x</script>", "&lt;script&gt;x&lt;/script&gt;"},
		{"quotes stay literal", `say "hi" it's`, `say "hi" it's`},
		{"bold", "**bold** text", "<b>bold</b> text"},
		{"bold underscores", "__bold__", "<b>bold</b>"},
		{"italic star", "an *italic* word", "an <i>italic</i> word"},
		{"italic underscore", "an _italic_ word", "an <i>italic</i> word"},
		{"snake_case untouched", "call my_func_name now", "call my_func_name now"},
		{"lone stars", "2 * 3 * 4", "2 * 3 * 4"},
		{"strike", "~~gone~~", "<s>gone</s>"},
		{"single tilde literal", "~approx", "~approx"},
		{"inline code escapes", "use `a<b && *c*`", "use <code>a&lt;b &amp;&amp; *c*</code>"},
		{"double backtick code", "``a ` b``", "<code>a ` b</code>"},
		{"nested bold italic", "**bold *it* bold**", "<b>bold <i>it</i> bold</b>"},
		{"italic containing bold", "*it **b** it*", "<i>it <b>b</b> it</i>"},
		{"triple stars", "***both***", "<i><b>both</b></i>"},
		{"unclosed bold literal", "**oops", "**oops"},
		{"link", "see [the docs](https://x.io/a?b=1&c=2)", `see <a href="https://x.io/a?b=1&amp;c=2">the docs</a>`},
		{"link with bold label", "[**go**](https://go.dev)", `<a href="https://go.dev"><b>go</b></a>`},
		{"link bad scheme", "[x](javascript:alert(1))", "x (javascript:alert(1))"},
		{"escaped star", `\*not italic\*`, "*not italic*"},
		{"heading", "# Title & more", "<b>Title &amp; more</b>"},
		{"heading level 3 trailing hashes", "### Sub ###", "<b>Sub</b>"},
		{"bullets", "- one\n* two\n  + nested", "• one\n• two\n  • nested"},
		{"numbered", "1. first\n2) second", "1. first\n2. second"},
		{"rule", "---", "──────────"},
		{"fenced code with lang", "```go\nif a < b {\n\t**x**\n}\n```", "<pre><code class=\"language-go\">if a &lt; b {\n\t**x**\n}</code></pre>"},
		{"fenced code no lang", "```\nx & y\n```\nafter", "<pre><code>x &amp; y</code></pre>\nafter"},
		{"unterminated fence", "```py\nprint(1)", "<pre><code class=\"language-py\">print(1)</code></pre>"},
		{"bad language dropped", "```a\"b\nx\n```", "<pre><code>x</code></pre>"},
		{"crlf", "**a**\r\nb", "<b>a</b>\nb"},
		{"emoji and utf8", "**héllo 👋**", "<b>héllo 👋</b>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MarkdownToHTML(tt.in)
			if got != tt.want {
				t.Errorf("MarkdownToHTML(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHTMLToPlain(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<b>bold</b> &amp; <i>it</i>", "bold & it"},
		{`<a href="https://x.io/?a=1&amp;b=2">docs</a>`, "docs (https://x.io/?a=1&b=2)"},
		{`<a href="https://x.io">https://x.io</a>`, "https://x.io"},
		{"<pre><code class=\"language-go\">a &lt; b</code></pre>", "a < b"},
	}
	for _, tt := range tests {
		if got := HTMLToPlain(tt.in); got != tt.want {
			t.Errorf("HTMLToPlain(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
