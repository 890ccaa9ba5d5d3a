package markdown

import "strings"

// HoldOpen cuts md, a reply still being written, before a bold,
// strikethrough or inline code span that is not closed yet, so a preview
// does not show its markers for a moment and then the formatting.
func HoldOpen(md string) string {
	for _, d := range []string{"**", "~~"} {
		if strings.Count(md, d)%2 == 1 {
			md = md[:strings.LastIndex(md, d)]
		}
	}
	if fences := strings.Count(md, "```"); fences%2 == 0 && (strings.Count(md, "`")-3*fences)%2 == 1 {
		md = md[:strings.LastIndex(md, "`")]
	}
	return md
}
