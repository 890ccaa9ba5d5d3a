// Package doctor is `omega doctor`: it checks the configuration and what
// it names (data directory, database, provider, HTTP API, channels) and
// says what to fix.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/providers/registry"
	"github.com/spf13/cobra"
)

// NewCommand is `omega doctor`; a failed check exits with status 1.
func NewCommand() *cobra.Command {
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
	cfg, err := config.Load()
	return checkAll(ctx, w, cfg, err)
}

// checkAll reports on a configuration and what it names; loadErr is why
// it could not be read.
func checkAll(ctx context.Context, w io.Writer, cfg config.Config, loadErr error) error {
	c := &checkup{w: w}
	if err := loadErr; err != nil {
		c.fail("config", err.Error(), "correct the OMEGA_* variables listed above (see README, Configuration)")
		return &cli.ExitError{Code: 1, Err: errors.New("configuration is invalid")}
	}
	// What a server answered is shown as it came, minus every secret: a
	// Bot API error may echo the request path with the bot token in it.
	c.w = cfg.Redactor().Writer(w)
	c.ok("config", fmt.Sprintf("provider %s, store %s, data %s, sandbox %s", cfg.Provider.Provider, cfg.Backend(), cfg.DataDir, cfg.Provider.Sandbox))

	checkDataDir(c, cfg)
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	a := checkDatabase(dctx, c, cfg)
	if a != nil {
		defer a.Close()
	}
	checkProvider(dctx, c, cfg)
	checkHTTP(c, cfg)
	checkChannels(dctx, c, cfg, a)
	checkTopologies(c, cfg)
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "prompts")); err == nil {
		c.ok("prompts", "overrides in "+filepath.Join(cfg.DataDir, "prompts"))
	}
	if c.failed > 0 {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("%d check(s) failed", c.failed)}
	}
	return nil
}

func checkDataDir(c *checkup, cfg config.Config) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		c.fail("data dir", err.Error(), "set OMEGA_DATA_DIR to a writable directory")
	} else if f, err := os.CreateTemp(cfg.DataDir, ".doctor-*"); err != nil {
		c.fail("data dir", err.Error(), "make "+cfg.DataDir+" writable or set OMEGA_DATA_DIR")
	} else {
		f.Close()
		os.Remove(f.Name())
		c.ok("data dir", cfg.DataDir+" is writable")
	}

}

// checkDatabase opens the store without migrating it and reports its
// schema; nil when it cannot be opened.
func checkDatabase(dctx context.Context, c *checkup, cfg config.Config) *app.App {
	a, err := app.Open(dctx, cfg, cfg.Logger(), app.OpenOptions{SkipMigrate: true, MustExist: true})
	if errors.Is(err, app.ErrNoData) {
		where := cfg.SQLitePath()
		if cfg.DatabaseURL != "" {
			where = app.WhereOf(cfg) + ", no omega schema"
		}
		c.ok("database", "none yet at "+where+"; `omega serve` creates it")
		return nil
	}
	if err != nil {
		c.fail("database", err.Error(), "start the database or correct OMEGA_DATABASE_URL (unset it to use the embedded SQLite store)")
		return nil
	}
	current, latest, err := a.MigrationStatus(dctx)
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
	if current > 0 { // before the first migration there is no log to read
		checkPoisoned(dctx, c, a)
	}
	return a
}

func checkProvider(dctx context.Context, c *checkup, cfg config.Config) {
	p, err := registry.New(cfg.Provider, cfg.Logger())
	if err != nil {
		c.fail("provider", err.Error(), "set OMEGA_PROVIDER to claude-code, anthropic or openai")
	} else if err := p.Check(dctx); err != nil {
		c.fail("provider", err.Error(), "see the message above; omega still starts and answers with an explanation until this is fixed")
	} else {
		c.ok("provider", fmt.Sprintf("%s ready (fast model %s)", cfg.Provider.Provider, cfg.Provider.ModelFast))
	}

}

func checkHTTP(c *checkup, cfg config.Config) {
	if cfg.HTTPAddr == "" {
		c.warn("http", "off (OMEGA_HTTP_ADDR is empty; unset it to listen on 127.0.0.1:8787)")
		return
	}
	token := "none needed on loopback"
	switch {
	case cfg.APIToken != "":
		token = "OMEGA_API_TOKEN"
	case cfg.HTTPNeedsToken():
		token = "generated by serve into " + filepath.Join(cfg.DataDir, config.APITokenFile)
	}
	c.ok("http", fmt.Sprintf("API on %s (token: %s)", cfg.HTTPAddr, token))
}

// checkChannels runs every channel's own check: the registry's channels
// that have settings, off ones with what turns them on. The device
// checks need the database (a); without one only the settings are
// checked.
func checkChannels(dctx context.Context, c *checkup, cfg config.Config, a *app.App) {
	env := channels.Env{Logger: cfg.Logger()}
	if a != nil {
		env = a.ChannelEnv(cfg.Logger())
	}
	for _, d := range cfg.Descriptors() {
		s, ok := cfg.Channels[d.Name]
		if !ok {
			continue // no settings: not a server channel (the terminal)
		}
		if !s.On() {
			c.warn(d.Name, "off (set "+s.EnableVar()+" to enable)")
			continue
		}
		if d.Doctor == nil {
			c.ok(d.Name, "on")
			continue
		}
		for _, f := range d.Doctor(dctx, s, env) {
			c.report(d.Name, f)
		}
	}
}

// report prints one finding of a channel's check.
func (c *checkup) report(what string, f channels.Finding) {
	switch f.Level {
	case channels.LevelOK:
		c.ok(what, f.Detail)
	case channels.LevelWarn:
		c.warn(what, f.Detail)
	default:
		c.fail(what, f.Detail, f.Fix)
	}
}

// checkPoisoned lists the events read models skipped because they could
// not store them (see ProjectionEventPoisoned): the log keeps them, the
// read models lack their effect.
func checkPoisoned(ctx context.Context, c *checkup, a *app.App) {
	poisoned, err := a.Engine.Poisoned(ctx)
	switch {
	case err != nil:
		c.warn("projection", "cannot read poisoned events: "+err.Error())
	case len(poisoned) == 0:
		c.ok("projection", "no event skipped by a read model")
	default:
		c.warn("projection", fmt.Sprintf("%d event(s) skipped by read models (recorded in stream %s):", len(poisoned), system.ProjectionPoisonStream))
		for _, p := range poisoned {
			fmt.Fprintf(c.w, "      %s skipped %s at position %d (%s): %s\n", p.Projection, p.Type, p.Position, p.StreamID, p.Error)
		}
	}
}
