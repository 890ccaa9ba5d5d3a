// Package terminal is the local user's channel: `omega chat` reads lines
// from the terminal (with history on the arrow keys) and prints replies as
// the pipeline records them.
package terminal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/omega-gateway/omega/channels"
)

// Name is the channel name of terminal messages.
const Name = "terminal"

// Channel is the terminal channel. Its one sender is the local user, who
// is trusted: being at the keyboard of omega's machine is authentication.
type Channel struct {
	In       *os.File
	Out      io.Writer
	SenderID string // default: the OS user name
	Prompt   string
	// OnEnd runs when input ends, after which no more messages come;
	// `omega chat` uses it to exit. waitForReplies is true for /exit and the
	// end of piped input, false for Ctrl-C or Ctrl-D on a terminal (leave
	// at once: unfinished turns stay on record and finish next time).
	OnEnd func(waitForReplies bool)

	mu      sync.Mutex
	term    *term.Terminal
	restore func()
	stop    chan struct{} // closed by Stop
	// previews are the replies being printed as they are written.
	previews    map[string]*preview
	nextPreview int
}

var _ channels.Channel = (*Channel)(nil)

func (c *Channel) Name() string { return Name }

func (c *Channel) FormatHint() string { return formatHint }

const formatHint = "Platform: terminal. Plain text reads best; light Markdown is fine."

// Start reads lines until end of input, "/exit", or ctx ends.
func (c *Channel) Start(ctx context.Context, deliver channels.Deliver) error {
	if c.SenderID == "" {
		c.SenderID = "owner"
	}
	if c.Prompt == "" {
		c.Prompt = "you> "
	}
	interactive := term.IsTerminal(int(c.In.Fd()))
	lines, errc, err := c.read(interactive)
	if err != nil {
		return err
	}
	defer c.restoreTerminal()
	stop := c.stopped()
	wait, ended := true, true
	defer func() {
		if ended && c.OnEnd != nil {
			go c.OnEnd(wait)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-stop:
			ended = false // stopped from outside: input did not end
			return nil
		case err := <-errc:
			if errors.Is(err, io.EOF) {
				wait = !interactive // a pipe ran dry; a person pressed Ctrl-C or Ctrl-D
				return nil
			}
			return fmt.Errorf("terminal: read: %w", err)
		case line := <-lines:
			if c.handle(ctx, deliver, strings.TrimSpace(line)) {
				return nil
			}
		}
	}
}

// handle delivers one typed line and reports whether the user asked to
// leave.
func (c *Channel) handle(ctx context.Context, deliver channels.Deliver, line string) (exit bool) {
	switch line {
	case "":
		return false
	case "/exit", "/quit":
		return true
	}
	err := deliver(ctx, channels.Incoming{Channel: Name, SenderID: c.SenderID, SenderName: c.SenderID, ChatID: c.SenderID, Text: line, Trusted: true})
	if err != nil {
		c.print("! could not record your message: " + err.Error())
	}
	return false
}

// read starts reading lines: through a raw-mode line editor (history on
// the arrow keys) on a terminal, plainly from a pipe. The error channel
// receives io.EOF when input ends.
func (c *Channel) read(interactive bool) (<-chan string, <-chan error, error) {
	lines := make(chan string)
	errc := make(chan error, 1)
	if !interactive {
		go func() {
			sc := bufio.NewScanner(c.In)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				lines <- sc.Text()
			}
			errc <- io.EOF
		}()
		return lines, errc, nil
	}
	state, err := term.MakeRaw(int(c.In.Fd()))
	if err != nil {
		return nil, nil, fmt.Errorf("terminal: %w", err)
	}
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{c.In, c.Out}, c.Prompt)
	c.mu.Lock()
	c.restore = func() { _ = term.Restore(int(c.In.Fd()), state) }
	c.term = t
	c.mu.Unlock()
	go func() {
		for {
			line, err := t.ReadLine()
			if err != nil {
				errc <- err
				return
			}
			lines <- line
		}
	}()
	return lines, errc, nil
}

// stopped returns the channel Stop closes.
func (c *Channel) stopped() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop == nil {
		c.stop = make(chan struct{})
	}
	return c.stop
}

// Stop ends Start and restores the terminal. It may be called more than
// once.
func (c *Channel) Stop(context.Context) error {
	c.mu.Lock()
	if c.stop == nil {
		c.stop = make(chan struct{})
	}
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.mu.Unlock()
	c.restoreTerminal()
	return nil
}

// restoreTerminal leaves raw mode, once.
func (c *Channel) restoreTerminal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.restore != nil {
		c.restore()
		c.restore = nil
		c.term = nil
		fmt.Fprintln(c.Out) // leave the shell on a fresh line
	}
}

func (c *Channel) print(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.term != nil {
		// Writing through the terminal keeps the line being typed intact.
		fmt.Fprint(c.term, strings.ReplaceAll(text, "\n", "\r\n")+"\r\n")
		return
	}
	fmt.Fprintln(c.Out, text)
}

// SendText prints a reply.
func (c *Channel) SendText(_ context.Context, _ string, text string) (channels.SendResult, error) {
	c.print("omega> " + text)
	return channels.SendResult{Chunks: 1}, nil
}

// SendTyping is silent: the prompt already shows omega is working.
func (c *Channel) SendTyping(context.Context, string) error { return nil }

// SendPhoto tells where the image is instead of drawing it.
func (c *Channel) SendPhoto(_ context.Context, _ string, photo channels.Attachment, caption string) error {
	c.print(fmt.Sprintf("omega> [image %s, %d bytes] %s", photo.Name, len(photo.Data), caption))
	return nil
}
