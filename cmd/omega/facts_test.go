package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// omega facts set refuses a secret, a malformed key and a marker name as
// a key: the binary exits non-zero naming why, each refusal is recorded as
// the command's failure, nothing is remembered, and no event holds the
// secret.
func TestFactsSetRefusesSecretsAndMalformedKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	const secret = "sk-proj-4f9aQ2xL7mN3bV8cZ1kR6tY0wE5uI"
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			vars, open := b.env(t)
			env := append(os.Environ(), append(vars, "HOME="+t.TempDir(), "OMEGA_CLAUDE_BIN=/bin/false")...)
			omega := func(args ...string) (string, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, args...)
				cmd.Env = env
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				return out.String(), err
			}
			refused := []struct{ key, value, why string }{
				{"api_key", secret, "looks like a secret"},
				{"note", "my key is " + secret, "looks like a secret"},
				{"bad_key!", "yes", "only letters, digits"},
				{"PURGE_FACTS", "now", "marker name"},
			}
			for _, r := range refused {
				out, err := omega("facts", "set", "telegram", "42", r.key, r.value)
				if err == nil || !strings.Contains(out, r.why) {
					t.Errorf("facts set %s = %v, want a refusal saying %q:\n%s", r.key, err, r.why, out)
				}
				if strings.Contains(out, secret) {
					t.Errorf("the refusal of %s echoes the secret:\n%s", r.key, out)
				}
			}
			if out, err := omega("facts", "set", "telegram", "42", "city", "Lima"); err != nil {
				t.Fatalf("facts set city: %v\n%s", err, out)
			}
			out, err := omega("facts", "list", "telegram", "42")
			if err != nil || !strings.Contains(out, "Lima") || strings.Contains(out, "sk-") || strings.Contains(out, "bad_key") || strings.Contains(out, "purge") {
				t.Fatalf("facts list = %v:\n%s", err, out)
			}

			s := open()
			evs := wholeLog(t, s)
			failed := 0
			for _, e := range evs {
				if e.Type == "CommandFailed" && strings.Contains(string(e.Data), "RecordFact") {
					failed++
				}
				if strings.Contains(string(e.Data), secret) {
					t.Errorf("%s records the secret: %s", e.Type, e.Data)
				}
			}
			if failed != len(refused) {
				t.Fatalf("%d refusals recorded as CommandFailed, want %d", failed, len(refused))
			}
		})
	}
}
