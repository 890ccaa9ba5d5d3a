package terminal

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/omega-gateway/omega/channels"
)

var _ channels.Previewer = (*Channel)(nil)

// preview prints a reply as it is written: each update prints what it
// adds. On a terminal the line being typed is redrawn after each write,
// so there only complete lines are printed as they come.
type preview struct {
	c       *Channel
	id      string
	printed string // the reply text printed so far; c.mu guards it
	open    bool   // a line of the reply is printed without its newline
}

// StartPreview begins printing one reply.
func (c *Channel) StartPreview(context.Context, string) (channels.Preview, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextPreview++
	p := &preview{c: c, id: "terminal-" + strconv.Itoa(c.nextPreview)}
	if c.previews == nil {
		c.previews = map[string]*preview{}
	}
	c.previews[p.id] = p
	return p, nil
}

// ID names the preview inside this process: a reply resumed after a
// restart is printed whole.
func (p *preview) ID() string { return p.id }

// Update prints what text adds to the reply printed so far. A text that
// does not extend it (the agent's activity line came and went) prints
// nothing until it does again.
func (p *preview) Update(_ context.Context, text string) error {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	p.printTo(text)
	return nil
}

// ShowWork prints the reply so far; the agent's activity is left to the
// prompt line the person watches, not mixed into the reply.
func (p *preview) ShowWork(ctx context.Context, text, _ string) error { return p.Update(ctx, text) }

// printTo prints the part of text past what is printed; c.mu is held.
func (p *preview) printTo(text string) {
	if !strings.HasPrefix(text, p.printed) || text == p.printed {
		return
	}
	add := text[len(p.printed):]
	if p.c.term != nil {
		// Only whole lines: the terminal redraws the prompt after each write.
		i := strings.LastIndexByte(add, '\n')
		if i < 0 {
			return
		}
		add = add[:i+1]
		lead := ""
		if p.printed == "" {
			lead = "omega> "
		}
		fmt.Fprint(p.c.term, lead+strings.ReplaceAll(add, "\n", "\r\n"))
		p.printed += add
		return
	}
	if p.printed == "" {
		add = "omega> " + add
	}
	fmt.Fprint(p.c.Out, add)
	p.printed, p.open = text, true
}

// FinishPreview prints the rest of the reply under its preview; a final
// text that is not the preview's continuation (an error replaced it) is
// printed whole on its own line.
func (c *Channel) FinishPreview(ctx context.Context, chatID, previewID, text string) (channels.SendResult, error) {
	c.mu.Lock()
	p, ok := c.previews[previewID]
	delete(c.previews, previewID)
	if !ok || p.printed == "" {
		c.mu.Unlock()
		return c.SendText(ctx, chatID, text)
	}
	if strings.HasPrefix(text, p.printed) {
		rest := text[len(p.printed):]
		if c.term != nil {
			fmt.Fprint(c.term, strings.ReplaceAll(rest, "\n", "\r\n")+"\r\n")
		} else {
			fmt.Fprintln(c.Out, rest)
		}
		c.mu.Unlock()
		return channels.SendResult{Chunks: 1}, nil
	}
	if p.open {
		fmt.Fprintln(c.Out)
	}
	c.mu.Unlock()
	return c.SendText(ctx, chatID, text)
}
