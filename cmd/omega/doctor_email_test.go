package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/email/emailtest"
)

// `omega doctor` logs in to the IMAP and SMTP servers of a real Dovecot,
// and says which one refused a wrong password without showing it.
func TestDoctorLogsInToEmailServers(t *testing.T) {
	d := emailtest.StartDovecotWith(t, emailtest.Options{Submission: true}, "omega@example.test")
	bin := buildOmega(t)
	run := func(password string) string {
		cmd := exec.Command(bin, "doctor")
		cmd.Env = append(os.Environ(), "OMEGA_DATA_DIR="+t.TempDir(), "OMEGA_DATABASE_URL=", "OMEGA_TELEGRAM_TOKEN=",
			"OMEGA_WHATSAPP_ENABLED=", "OMEGA_CLAUDE_BIN="+filepath.Join(t.TempDir(), "no-such-claude"),
			"OMEGA_EMAIL_IMAP_ADDR="+d.IMAPAddr, "OMEGA_EMAIL_SMTP_ADDR="+d.SubmissionAddr,
			"OMEGA_EMAIL_IMAP_TLS=plain", "OMEGA_EMAIL_SMTP_TLS=plain",
			"OMEGA_EMAIL_USERNAME=omega@example.test", "OMEGA_EMAIL_PASSWORD="+password,
			"OMEGA_EMAIL_ALLOWED_ADDRESSES=alice@example.test")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	report := run(emailtest.Password)
	for _, want := range []string{"ok    email      IMAP login to " + d.IMAPAddr + ", INBOX has 0 message(s)",
		"ok    email      SMTP login to " + d.SubmissionAddr} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	report = run("wrong-pw-2718")
	for _, want := range []string{"FAIL  email      IMAP: login as omega@example.test", "FAIL  email      SMTP: login as omega@example.test",
		"fix: check OMEGA_EMAIL_IMAP_ADDR"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "wrong-pw-2718") {
		t.Errorf("the password is in the report:\n%s", report)
	}
}
