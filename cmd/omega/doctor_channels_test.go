package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/registry"
)

// pagerSettings are a channel's settings that only its descriptor names.
type pagerSettings struct {
	Token string `env:"PAGER_TOKEN"`
	URL   string `env:"PAGER_URL" envDefault:"https://pager.invalid"`
}

func (p *pagerSettings) On() bool             { return p.Token != "" }
func (p *pagerSettings) Validate() error      { return nil }
func (p *pagerSettings) Secrets() []string    { return []string{p.Token} }
func (p *pagerSettings) Allowed() []string    { return nil }
func (p *pagerSettings) AllowlistVar() string { return "" }
func (p *pagerSettings) EnableVar() string    { return "OMEGA_PAGER_TOKEN" }

// pager's check fails the way a server that echoes the token would.
var pager = channels.Descriptor{
	Name: "pager", Title: "Pager",
	Settings: func() channels.Settings { return &pagerSettings{} },
	Doctor: func(_ context.Context, s channels.Settings, _ channels.Env) []channels.Finding {
		p := s.(*pagerSettings)
		return []channels.Finding{channels.Fail("cannot reach "+p.URL+"/send?token="+p.Token, "check OMEGA_PAGER_URL")}
	},
}

// A channel added to the descriptor list alone is checked by omega
// doctor: off with what turns it on, on with its own check, its secret
// masked.
func TestDoctorChecksARegisteredChannel(t *testing.T) {
	descs := append(registry.All(), pager)
	vars := map[string]string{"OMEGA_DATA_DIR": t.TempDir(), "OMEGA_CLAUDE_BIN": filepath.Join(t.TempDir(), "no-such-claude")}
	run := func() string {
		cfg, err := config.LoadChannels(vars, descs)
		var out bytes.Buffer
		_ = checkAll(context.Background(), &out, cfg, err)
		return out.String()
	}
	if report := run(); !strings.Contains(report, "warn  pager      off (set OMEGA_PAGER_TOKEN to enable)") {
		t.Fatalf("the pager off is not reported:\n%s", report)
	}
	vars["OMEGA_PAGER_TOKEN"] = "pager-secret-314"
	report := run()
	for _, want := range []string{"FAIL  pager      cannot reach https://pager.invalid/send?token=[REDACTED]", "fix: check OMEGA_PAGER_URL"} {
		if !strings.Contains(report, want) {
			t.Fatalf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "pager-secret-314") {
		t.Fatalf("the pager's token is in the report:\n%s", report)
	}
}

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
