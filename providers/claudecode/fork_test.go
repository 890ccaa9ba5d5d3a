package claudecode

import (
	"slices"
	"testing"

	"github.com/omega-gateway/omega/providers"
)

// A request that asks for a fork resumes a copy of its session
// (--fork-session beside --resume); an ordinary resume does not fork,
// and a fresh call has nothing to fork.
func TestClaudeCodeForkSession(t *testing.T) {
	c := New(providers.Config{}, nil)
	for _, tt := range []struct {
		req  providers.Request
		fork bool
	}{
		{providers.Request{Prompt: "hi", SessionID: "sess-1", ForkSession: true}, true},
		{providers.Request{Prompt: "hi", SessionID: "sess-1"}, false},
		{providers.Request{Prompt: "hi", ForkSession: true}, false},
	} {
		inv, cleanup, err := c.invocation(tt.req, "m")
		if err != nil {
			t.Fatal(err)
		}
		cleanup()
		args := inv.args()
		i := slices.Index(args, "--resume")
		if (i >= 0) != (tt.req.SessionID != "") || i >= 0 && args[i+1] != tt.req.SessionID {
			t.Fatalf("%+v: args %q", tt.req, args)
		}
		if got := slices.Contains(args, "--fork-session"); got != tt.fork {
			t.Fatalf("%+v: --fork-session %v, want %v: %q", tt.req, got, tt.fork, args)
		}
	}
}
