package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/eventstore"
)

// omega pairing lists a pending code, approves it through the command
// bus (PairingApproved in the log), refuses a second approval and an
// unknown code clearly, and revokes the sender; omega identity links and
// unlinks.
func TestPairingCLI(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := openCLIStore(t, backend)
			ev, err := domain.NewEventFrom(access.PairingRequested{Code: "K7M2QX", Channel: "telegram", SenderID: "99", SenderName: "Ana",
				ChatID: "99", TurnID: "t1", ExpiresAt: time.Now().Add(time.Hour)}, domain.Metadata{CorrelationID: "t1"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(context.Background(), access.SenderPairingStream, eventstore.NoStream, ev); err != nil {
				t.Fatal(err)
			}
			s.Close()

			if out := runOmega(t, "pairing", "list"); !strings.Contains(out, "K7M2QX") || !strings.Contains(out, "telegram:99") || !strings.Contains(out, "pending") {
				t.Fatalf("list:\n%s", out)
			}
			runOmega(t, "pairing", "approve", "k7m2qx")
			if out := runOmega(t, "pairing", "list"); strings.Contains(out, "K7M2QX") || !strings.Contains(out, "approved: telegram:99") {
				t.Fatalf("list after approval:\n%s", out)
			}
			if out := runOmega(t, "pairing", "list", "--all"); !strings.Contains(out, "approved") {
				t.Fatalf("list --all:\n%s", out)
			}
			for args, want := range map[string]string{
				"pairing approve K7M2QX": "already decided",
				"pairing reject ZZZZZZ":  "no such pairing code",
				"pairing revoke nobody":  `CHANNEL:SENDER must be channel:id, such as telegram:1001 (got "nobody")`,
				"identity link a b":      `CANONICAL must be channel:id, such as telegram:1001 (got "a")`,
				"identity unlink nobody": `CHANNEL:ID must be channel:id, such as telegram:1001 (got "nobody")`,
			} {
				if out, err := runOmegaErr(strings.Fields(args)...); err == nil || !strings.Contains(err.Error()+out, want) {
					t.Errorf("%s: %v\n%s", args, err, out)
				}
			}
			runOmega(t, "pairing", "revoke", "telegram:99")
			if out := runOmega(t, "pairing", "list"); strings.Contains(out, "approved: telegram:99") {
				t.Fatalf("list after revoke:\n%s", out)
			}

			runOmega(t, "identity", "link", "telegram:42", "whatsapp:4915112345678")
			if out := runOmega(t, "identity", "list"); !strings.Contains(out, "whatsapp:4915112345678 → telegram:42") {
				t.Fatalf("identity list:\n%s", out)
			}
			runOmega(t, "identity", "unlink", "whatsapp:4915112345678")
			if out := runOmega(t, "identity", "list"); strings.TrimSpace(out) != "" {
				t.Fatalf("identity list after unlink:\n%s", out)
			}
			s = reopenCLIStore(t, backend)
			defer s.Close()
			evs, err := s.Load(context.Background(), access.SenderPairingStream, 1)
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, e := range evs {
				types = append(types, e.Type)
			}
			if got := strings.Join(types, " "); got != "PairingRequested PairingApproved PairingRevoked" {
				t.Fatalf("pairing stream: %s", got)
			}
		})
	}
}

func runOmegaErr(args ...string) (string, error) {
	root := rootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}
