package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/spf13/cobra"
)

// senderArgs runs SenderArgs with two more arguments expected and
// returns what it read and what it printed on stderr.
func senderArgs(args ...string) (sender.SenderRef, string, string, error) {
	var errOut bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetErr(&errOut)
	who, rest, err := SenderArgs(cmd, args, 2)
	return who, strings.Join(rest, " "), errOut.String(), err
}

// A sender is CHANNEL:ID; the older two-word form still works, with a
// note; a wrong count is refused in words.
func TestSenderArgs(t *testing.T) {
	want := sender.SenderRef{Channel: "telegram", ID: "42"}
	who, rest, note, err := senderArgs("telegram:42", "name", "Ana")
	if err != nil || who != want || rest != "name Ana" || note != "" {
		t.Errorf("CHANNEL:ID form: %+v %q %q %v", who, rest, note, err)
	}
	who, rest, note, err = senderArgs("telegram", "42", "name", "Ana")
	if err != nil || who != want || rest != "name Ana" || !strings.Contains(note, "is the old form; write telegram:42") {
		t.Errorf("old form: %+v %q %q %v", who, rest, note, err)
	}
	if _, _, _, err = senderArgs("telegram:42"); err == nil || !strings.Contains(err.Error(), "want CHANNEL:ID and 2 more argument(s), got 1") {
		t.Errorf("too few arguments: %v", err)
	}
}
