package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/matrix/matrixtest"
	"github.com/omega-gateway/omega/internal/freeport"
)

// `omega doctor` asks a real Dendrite for its versions and whom the
// access token belongs to, and says so when the token is refused
// without showing it.
func TestDoctorChecksMatrixHomeserver(t *testing.T) {
	d := matrixtest.Start(t)
	bot := d.Register(t, "omega")
	bin := buildOmega(t)
	run := func(homeserver, token string) string {
		cmd := exec.Command(bin, "doctor")
		cmd.Env = append(os.Environ(), "OMEGA_DATA_DIR="+t.TempDir(), "OMEGA_DATABASE_URL=", "OMEGA_TELEGRAM_TOKEN=",
			"OMEGA_WHATSAPP_ENABLED=", "OMEGA_CLAUDE_BIN="+filepath.Join(t.TempDir(), "no-such-claude"),
			"OMEGA_MATRIX_HOMESERVER="+homeserver, "OMEGA_MATRIX_USER_ID="+bot.ID, "OMEGA_MATRIX_ACCESS_TOKEN="+token,
			"OMEGA_MATRIX_ALLOWED_USERS=@alice:localhost")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	report := run(d.URL, bot.Token)
	for _, want := range []string{"ok    matrix     homeserver " + d.URL + " answers (spec v1.", "ok    matrix     logged in as " + bot.ID} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	report = run(d.URL, "syt_wrong_token_2718")
	for _, want := range []string{"FAIL  matrix     access token refused: HTTP 401 M_UNKNOWN_TOKEN", "fix: set OMEGA_MATRIX_ACCESS_TOKEN"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "wrong_token_2718") {
		t.Errorf("the token is in the report:\n%s", report)
	}
	report = run("http://"+freeport.Addr(t), bot.Token)
	if !strings.Contains(report, "FAIL  matrix     homeserver http://") || !strings.Contains(report, "fix: check OMEGA_MATRIX_HOMESERVER") {
		t.Errorf("an unreachable homeserver is not reported:\n%s", report)
	}
}
