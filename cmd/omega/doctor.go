package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/config"
	"github.com/omega-gateway/omega/migrations"
	"github.com/omega-gateway/omega/providers"
)

func doctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check configuration, database, provider and channels, and say what to fix",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return doctor(cmd.Context(), cmd.OutOrStdout())
		},
	}
}

type checkup struct {
	w      io.Writer
	failed int
}

func (c *checkup) ok(what, detail string) { fmt.Fprintf(c.w, "ok    %-10s %s\n", what, detail) }
func (c *checkup) warn(what, detail string) {
	fmt.Fprintf(c.w, "warn  %-10s %s\n", what, detail)
}
func (c *checkup) fail(what, detail, fix string) {
	c.failed++
	fmt.Fprintf(c.w, "FAIL  %-10s %s\n      fix: %s\n", what, detail, fix)
}

func doctor(ctx context.Context, w io.Writer) error {
	c := &checkup{w: w}
	cfg, err := config.Load()
	if err != nil {
		c.fail("config", err.Error(), "correct the OMEGA_* variables listed above (see README, Configuration)")
		return &exitError{code: 1, err: errors.New("configuration is invalid")}
	}
	c.ok("config", fmt.Sprintf("provider %s, store %s, data %s", cfg.Provider.Provider, cfg.Backend(), cfg.DataDir))

	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		c.fail("data dir", err.Error(), "set OMEGA_DATA_DIR to a writable directory")
	} else if f, err := os.CreateTemp(cfg.DataDir, ".doctor-*"); err != nil {
		c.fail("data dir", err.Error(), "make "+cfg.DataDir+" writable or set OMEGA_DATA_DIR")
	} else {
		f.Close()
		os.Remove(f.Name())
		c.ok("data dir", cfg.DataDir+" is writable")
	}

	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	a, err := app.Open(dctx, cfg, cfg.Logger(), app.OpenOptions{SkipMigrate: true})
	if err != nil {
		c.fail("database", err.Error(), "start the database or correct OMEGA_DATABASE_URL (unset it to use the embedded SQLite store)")
	} else {
		defer a.Close()
		current, latest, err := migrations.Status(dctx, a.Store.DB(), migrations.Dialect(a.Dialect))
		switch {
		case err != nil:
			c.fail("database", err.Error(), "run `omega migrate`")
		case current > latest:
			c.fail("database", fmt.Sprintf("%s is at schema %d, newer than this omega (%d)", a.Where(), current, latest), "upgrade omega")
		case current < latest:
			c.warn("database", fmt.Sprintf("%s is at schema %d of %d; `omega serve` or `omega migrate` will upgrade it", a.Where(), current, latest))
		default:
			c.ok("database", fmt.Sprintf("%s, schema %d", a.Where(), current))
		}
	}

	p, err := providers.New(cfg.Provider, cfg.Logger())
	if err != nil {
		c.fail("provider", err.Error(), "set OMEGA_PROVIDER to claude-code, anthropic or openai")
	} else if err := p.Check(dctx); err != nil {
		c.fail("provider", err.Error(), "see the message above; omega still starts and answers with an explanation until this is fixed")
	} else {
		c.ok("provider", fmt.Sprintf("%s ready (fast model %s)", cfg.Provider.Provider, cfg.Provider.ModelFast))
	}

	if cfg.HTTPAddr != "" {
		c.ok("http", fmt.Sprintf("API on %s (token required: %v)", cfg.HTTPAddr, cfg.APIToken != ""))
	}
	if cfg.Telegram.Token == "" {
		c.warn("telegram", "off (set OMEGA_TELEGRAM_TOKEN to enable)")
	} else {
		if name, err := telegramGetMe(dctx, cfg.Telegram.APIURL, cfg.Telegram.Token); err != nil {
			c.fail("telegram", err.Error(), "check OMEGA_TELEGRAM_TOKEN (from @BotFather) and OMEGA_TELEGRAM_API_URL")
		} else {
			c.ok("telegram", "bot @"+name)
		}
		if len(cfg.Telegram.AllowedUsers) == 0 {
			c.warn("telegram", "no OMEGA_TELEGRAM_ALLOWED_USERS: everyone will be denied")
		}
	}
	if !cfg.WhatsApp.Enabled {
		c.warn("whatsapp", "off (set OMEGA_WHATSAPP_ENABLED=true to enable)")
	} else if a != nil {
		container, err := whatsapp.OpenDeviceStore(dctx, a.Store.DB(), string(a.Dialect), cfg.Logger())
		if err != nil {
			c.fail("whatsapp", err.Error(), "check the database")
		} else if wa, err := whatsapp.New(dctx, cfg.WhatsApp, container, cfg.Logger()); err != nil {
			c.fail("whatsapp", err.Error(), "check the database")
		} else if !wa.Paired() {
			c.fail("whatsapp", "no device paired", "run `omega whatsapp pair`")
		} else {
			c.ok("whatsapp", "device paired")
		}
		if len(cfg.WhatsApp.AllowedNumbers) == 0 {
			c.warn("whatsapp", "no OMEGA_WHATSAPP_ALLOWED_NUMBERS: everyone will be denied")
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "prompts")); err == nil {
		c.ok("prompts", "overrides in "+filepath.Join(cfg.DataDir, "prompts"))
	}
	if c.failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d check(s) failed", c.failed)}
	}
	return nil
}

// telegramGetMe asks the Bot API who the token belongs to.
func telegramGetMe(ctx context.Context, apiURL, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiURL+"/bot"+token+"/getMe", nil)
	if err != nil {
		return "", fmt.Errorf("bad OMEGA_TELEGRAM_API_URL")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("cannot reach %s", apiURL)
	}
	defer resp.Body.Close()
	var body struct {
		OK     bool `json:"ok"`
		Result struct {
			Username string `json:"username"`
		} `json:"result"`
		Description string `json:"description"`
	}
	if err := decodeJSON(resp.Body, &body); err != nil || !body.OK {
		return "", fmt.Errorf("the Bot API refused the token (HTTP %d %s)", resp.StatusCode, body.Description)
	}
	return body.Result.Username, nil
}
