package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The built binary's doctor reports the registry's channels as before.
func TestDoctorChannelLinesThroughBinary(t *testing.T) {
	bin := buildOmega(t)
	run := func(extra ...string) string {
		cmd := exec.Command(bin, "doctor")
		cmd.Env = append(os.Environ(), "OMEGA_DATA_DIR="+t.TempDir(), "OMEGA_DATABASE_URL=", "OMEGA_TELEGRAM_TOKEN=",
			"OMEGA_WHATSAPP_ENABLED=", "OMEGA_CLAUDE_BIN="+filepath.Join(t.TempDir(), "no-such-claude"))
		cmd.Env = append(cmd.Env, extra...)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	report := run()
	for _, want := range []string{"warn  telegram   off (set OMEGA_TELEGRAM_TOKEN to enable)",
		"warn  whatsapp   off (set OMEGA_WHATSAPP_ENABLED=true to enable)"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	report = run("OMEGA_WHATSAPP_ENABLED=true")
	if !strings.Contains(report, "warn  whatsapp   no OMEGA_WHATSAPP_ALLOWED_NUMBERS: everyone will be denied") {
		t.Errorf("whatsapp's allowlist is not checked:\n%s", report)
	}
	if out := runOmega(t, "whatsapp", "--help"); !strings.Contains(out, "Manage the WhatsApp device") || !strings.Contains(out, "pair") {
		t.Errorf("omega whatsapp --help:\n%s", out)
	}
}
