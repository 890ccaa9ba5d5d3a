package doctor

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/registry"
	"github.com/omega-gateway/omega/cmd/cli"
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

// omega doctor names what is broken and how to fix it, and fails.
func TestDoctorReportsMissingProvider(t *testing.T) {
	t.Setenv("OMEGA_DATA_DIR", t.TempDir())
	t.Setenv("OMEGA_DATABASE_URL", "")
	t.Setenv("OMEGA_CLAUDE_BIN", filepath.Join(t.TempDir(), "no-such-claude"))
	t.Setenv("OMEGA_TELEGRAM_TOKEN", "")
	var out bytes.Buffer
	err := doctor(context.Background(), &out)
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("doctor = %v, want exit 1\n%s", err, out.String())
	}
	report := out.String()
	for _, want := range []string{"ok    config", "ok    database", "FAIL  provider", "fix:"} {
		if !strings.Contains(report, want) {
			t.Fatalf("doctor report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "FAIL  database") || strings.Count(report, "FAIL") != 1 {
		t.Fatalf("only the provider should fail:\n%s", report)
	}
}
