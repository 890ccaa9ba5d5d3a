package signal

import (
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/omega-gateway/omega/channels/markdown"
)

// maxChunk is Signal's length for a message shown whole (longer text the
// apps send as a "long text" attachment).
const maxChunk = 2000

// Signal formats text with ranges beside it (signal-cli's textStyle
// "start:length:STYLE", in UTF-16 units), not with markup. The Markdown
// is rendered with private-use marker runes around each span; format
// turns them into ranges.
const (
	boldOn, boldOff     = '\uE001', '\uE002'
	italicOn, italicOff = '\uE003', '\uE004'
	strikeOn, strikeOff = '\uE005', '\uE006'
	monoOn, monoOff     = '\uE007', '\uE008'
)

var styleNames = map[rune]string{boldOn: "BOLD", italicOn: "ITALIC", strikeOn: "STRIKETHROUGH", monoOn: "MONOSPACE"}

var closer = map[rune]rune{boldOff: boldOn, italicOff: italicOn, strikeOff: strikeOn, monoOff: monoOn}

var signalStyle = markdown.Style{
	Text:         func(s string) string { return s },
	Bold:         markdown.Pair{Open: string(boldOn), Close: string(boldOff)},
	Italic:       markdown.Pair{Open: string(italicOn), Close: string(italicOff)},
	Strike:       markdown.Pair{Open: string(strikeOn), Close: string(strikeOff)},
	Code:         func(code string) string { return string(monoOn) + code + string(monoOff) },
	CodeBlock:    func(_, code string) string { return string(monoOn) + code + string(monoOff) },
	Link:         link,
	Heading:      func(text string) string { return string(boldOn) + text + string(boldOff) },
	FlatHeadings: true,
	Quote:        quoteLines,
	Table:        table,
	Rule:         "──────────",
	Bullet:       "• ",
}

// message is one message to send: its text and its styles.
type message struct {
	text   string
	styles []string
}

// messages renders md for Signal and cuts it into messages of at most
// maxChunk characters, each with the styles of its part.
func messages(md string) []message {
	md = strings.Map(func(r rune) rune {
		if r >= boldOn && r <= monoOff {
			return -1
		}
		return r
	}, md)
	marked := strings.TrimSpace(markdown.Render(md, signalStyle))
	var out []message
	open := map[rune]bool{}
	for _, chunk := range markdown.Chunk(marked, maxChunk) {
		m, still := styled(chunk, open)
		if strings.TrimSpace(m.text) != "" {
			out = append(out, m)
		}
		open = still
	}
	return out
}

// styled strips the markers from chunk, returning the ranges they mark;
// open are the spans a previous chunk left open, and the result's map
// the ones this chunk leaves open.
func styled(chunk string, open map[rune]bool) (message, map[rune]bool) {
	var b strings.Builder
	pos := 0
	starts := map[rune]int{}
	for on := range open {
		starts[on] = 0
	}
	var styles []string
	emit := func(on rune, end int) {
		if end > starts[on] {
			styles = append(styles, strconv.Itoa(starts[on])+":"+strconv.Itoa(end-starts[on])+":"+styleNames[on])
		}
		delete(starts, on)
	}
	for _, r := range chunk {
		if _, isOn := styleNames[r]; isOn {
			starts[r] = pos
			continue
		}
		if on, isOff := closer[r]; isOff {
			if _, ok := starts[on]; ok {
				emit(on, pos)
			}
			continue
		}
		b.WriteRune(r)
		pos += len(utf16.Encode([]rune{r}))
	}
	still := map[rune]bool{}
	for on := range starts {
		still[on] = true
	}
	for on := range still {
		emit(on, pos)
	}
	return message{text: b.String(), styles: styles}, still
}

func link(label, url string) string {
	if label = strings.TrimSpace(label); label == "" || label == url {
		return url
	}
	return label + " (" + url + ")"
}

func quoteLines(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

func table(header []markdown.Cell, rows [][]markdown.Cell) string {
	var out []string
	if h := joinCells(header, func(c markdown.Cell) string { return c.Plain }); h != "" {
		out = append(out, string(boldOn)+h+string(boldOff))
	}
	for _, row := range rows {
		if r := joinCells(row, func(c markdown.Cell) string { return c.Rendered }); r != "" {
			out = append(out, "• "+r)
		}
	}
	return strings.Join(out, "\n")
}

func joinCells(cells []markdown.Cell, text func(markdown.Cell) string) string {
	var parts []string
	for _, c := range cells {
		if t := text(c); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " — ")
}
