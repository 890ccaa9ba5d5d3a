package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/domain"
)

// A sender is CHANNEL:ID; the older two-word form still works, with a
// note; a wrong count is refused in words.
func TestSenderArgs(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     domain.SenderRef
		wantRest []string
		note     bool
		err      bool
	}{
		{"one word", []string{"telegram:42", "name", "Ana"}, domain.SenderRef{Channel: "telegram", ID: "42"}, []string{"name", "Ana"}, false, false},
		{"old form", []string{"telegram", "42", "name", "Ana"}, domain.SenderRef{Channel: "telegram", ID: "42"}, []string{"name", "Ana"}, true, false},
		{"too few", []string{"telegram:42"}, domain.SenderRef{}, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errOut bytes.Buffer
			cmd := &cobra.Command{}
			cmd.SetErr(&errOut)
			who, rest, err := SenderArgs(cmd, tt.args, 2)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if who != tt.want || strings.Join(rest, " ") != strings.Join(tt.wantRest, " ") {
				t.Fatalf("got %+v %q, want %+v %q", who, rest, tt.want, tt.wantRest)
			}
			if got := strings.Contains(errOut.String(), "is the old form"); got != tt.note {
				t.Fatalf("note printed %v, want %v: %q", got, tt.note, errOut.String())
			}
		})
	}
}
