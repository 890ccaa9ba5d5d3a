package terminal

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/channels/channeltest"
)

// syncBuffer is the terminal's output, read while the channel writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestChannelConformance runs the terminal on pipes: what a script piping
// into `omega chat` sees.
func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) channeltest.Harness {
		in, feed, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { feed.Close(); in.Close() })
		out := &syncBuffer{}
		return channeltest.Harness{
			Channel: &Channel{In: in, Out: out, SenderID: "owner"},
			ChatID:  "owner",
			// Lines on a pipe carry no ids; the terminal has no groups,
			// media or strangers, and keeps no position.
			Unnumbered: true,
			Receive: func(t *testing.T, text string) {
				if _, err := feed.WriteString(text + "\n"); err != nil {
					t.Fatal(err)
				}
			},
			Sent: func(*testing.T) []string {
				var sent []string
				for line := range strings.SplitSeq(out.String(), "\n") {
					if s, ok := strings.CutPrefix(line, "omega> "); ok {
						sent = append(sent, s)
					}
				}
				return sent
			},
		}
	})
}
