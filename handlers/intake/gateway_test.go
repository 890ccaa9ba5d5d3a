package intake_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/internal/teststores"
)

// A message delivered again (same platform id) is the same turn, recorded
// once and started once, with or without files; a redelivered file is not
// written again.
func TestRedeliveredMessageIsOneTurn(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			for _, tc := range []struct {
				name  string
				files []channels.Attachment
			}{
				{"text", nil},
				{"with a file", []channels.Attachment{{Name: "note.txt", MIME: "text/plain", Data: []byte("hello")}}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					s, inbox := b.Open(t), t.TempDir()
					var kicked []string
					g, err := intake.NewGateway(s, inbox, func(_, tn string) { kicked = append(kicked, tn) })
					if err != nil {
						t.Fatal(err)
					}
					in := channels.Incoming{Channel: "telegram", SenderID: "42", Text: "hi", PlatformID: "m-1", Attachments: tc.files}
					id, err := g.Receive(context.Background(), in)
					if err != nil {
						t.Fatal(err)
					}
					var saved []string
					for _, f := range tc.files {
						matches, _ := filepath.Glob(filepath.Join(inbox, id, "*"+f.Name))
						saved = append(saved, matches...)
					}
					for _, path := range saved {
						if err := os.Remove(path); err != nil {
							t.Fatal(err)
						}
					}
					again, err := g.Receive(context.Background(), in)
					if !errors.Is(err, intake.ErrDuplicate) || again != id {
						t.Fatalf("again: %q, %v; want %q and ErrDuplicate", again, err, id)
					}
					evs, err := s.Load(context.Background(), domain.TurnStream(id), 1)
					if err != nil || len(evs) != 1 || len(kicked) != 1 {
						t.Fatalf("%d events (%v), %d kicks; want one of each", len(evs), err, len(kicked))
					}
					for _, path := range saved {
						if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
							t.Errorf("file %s written again for a redelivery (%v)", path, err)
						}
					}
					if len(saved) != len(tc.files) {
						t.Errorf("saved %v for %d files", saved, len(tc.files))
					}
				})
			}
		})
	}
}
