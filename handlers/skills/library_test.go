package skills_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/handlers/skills"
	"github.com/omega-gateway/omega/internal/teststores"
)

func registry() *domain.Registry {
	r := events.NewRegistry()
	return r
}

func writeSkill(t *testing.T, dir, folder, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, folder), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, folder, "SKILL.md"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const weather = "---\nname: weather\ndescription: Forecasts\ntriggers: [weather, forecast]\nmcp_servers:\n  - name: wx\n    command: wx-mcp\n    env:\n      WX_KEY: top-secret\n---\nAsk the wx server.\n"

// Importing is idempotent across restarts and concurrent processes, a
// changed file is a new definition, a broken file is reported with its
// line and skipped while the others load, and secrets stay out of the log
// and the log lines.
func TestSyncImportsOnceAndSkipsBrokenFiles(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, reg, dir := b.Open(t), registry(), t.TempDir()
			writeSkill(t, dir, "weather", weather)
			writeSkill(t, dir, "broken", "---\nname: broken\ntriggers: [a, b\n---\nbody\n")
			var logs bytes.Buffer
			var logMu sync.Mutex
			logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))

			// Two processes start at once on one log.
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					lib, err := skills.New(store, reg, dir, logger)
					if err != nil {
						t.Error(err)
						return
					}
					if err := lib.Sync(ctx); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			lib, _ := skills.New(store, reg, dir, logger)
			if err := lib.Sync(ctx); err != nil { // a restart
				t.Fatal(err)
			}
			evs, err := store.Load(ctx, catalog.SkillsStream, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 || evs[0].Type != "SkillDefined" {
				t.Fatalf("skills stream = %d events, want one SkillDefined", len(evs))
			}
			if strings.Contains(string(evs[0].Data), "top-secret") || !strings.Contains(string(evs[0].Data), "WX_KEY") {
				t.Fatalf("event data %s: want the env name, not its value", evs[0].Data)
			}
			logMu.Lock()
			out := logs.String()
			logMu.Unlock()
			if !strings.Contains(out, filepath.Join(dir, "broken", "SKILL.md")+":3: unterminated list") || strings.Contains(out, "top-secret") {
				t.Fatalf("logs lack the broken file's line or leak a secret:\n%s", out)
			}

			all, err := lib.Skills(ctx)
			if err != nil || len(all) != 1 || all[0].Name != "weather" {
				t.Fatalf("skills = %+v, %v", all, err)
			}
			servers, err := lib.MCPServers(ctx, []string{"weather"})
			if err != nil || len(servers) != 1 || servers[0].Env["WX_KEY"] != "top-secret" || servers[0].Command != "wx-mcp" {
				t.Fatalf("servers = %+v, %v", servers, err)
			}

			// A file broken later keeps its skill, MCP secrets included.
			writeSkill(t, dir, "weather", "---\nname: weather\ntriggers: [x\n---\nbody\n")
			if err := lib.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if all, _ = lib.Skills(ctx); len(all) != 1 || all[0].Name != "weather" {
				t.Fatalf("skills after a bad edit = %+v", all)
			}
			if servers, _ = lib.MCPServers(ctx, []string{"weather"}); len(servers) != 1 || servers[0].Env["WX_KEY"] != "top-secret" {
				t.Fatalf("servers after a bad edit = %+v", servers)
			}

			// A changed file is a new event; a removed folder is removed.
			writeSkill(t, dir, "weather", strings.Replace(weather, "Ask the wx server.", "Ask the wx server twice.", 1))
			writeSkill(t, dir, "broken", "---\nname: fixed\n---\nNow fine.\n")
			if err := lib.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if all, _ = lib.Skills(ctx); len(all) != 2 || !strings.Contains(all[1].Body, "twice") {
				t.Fatalf("skills after change = %+v", all)
			}
			if err := os.RemoveAll(filepath.Join(dir, "broken")); err != nil {
				t.Fatal(err)
			}
			if err := lib.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if all, _ = lib.Skills(ctx); len(all) != 1 {
				t.Fatalf("skills after removal = %+v", all)
			}
			if v, _ := store.StreamVersion(ctx, catalog.SkillsStream); v != 4 {
				t.Fatalf("skills stream version %d, want 4 (defined, changed + defined, removed)", v)
			}
		})
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
