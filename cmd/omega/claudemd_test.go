package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const gitSkill = `---
name: git
description: Commits and branches
triggers: [git, commit]
---
Use git with care.
`

// waitFile waits until the file satisfies ok and returns its text.
func waitFile(t *testing.T, path string, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if ok(string(b)) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never came: %s is\n%s", what, path, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func writeIn(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// omega serve deploys the workspace's CLAUDE.md at start; a project and a
// skill added (imported by the next message) appear in its generated
// section, what the person wrote around the section survives every
// rewrite, and a restart neither duplicates the section nor rewrites an
// unchanged file.
func TestServeKeepsWorkspaceClaudeMD(t *testing.T) {
	eachShutdownBackend(t, nil, func(t *testing.T, bin string, e shutdownEnv, p *proc) {
		data := ""
		for _, kv := range e.env {
			if v, ok := strings.CutPrefix(kv, "OMEGA_DATA_DIR="); ok {
				data = v
			}
		}
		file := filepath.Join(data, "workspace", "CLAUDE.md")
		text := waitFile(t, file, "the deployed CLAUDE.md", func(s string) bool { return strings.Contains(s, "None yet.") })
		if !strings.HasPrefix(text, "# omega's workspace") || strings.Count(text, "## Projects") != 1 {
			t.Fatalf("deployed:\n%s", text)
		}
		mine := "# My own notes\nAlways answer in haiku.\n\n" + text + "\nA line of mine after the section.\n"
		if err := os.WriteFile(file, []byte(mine), 0o644); err != nil {
			t.Fatal(err)
		}

		writeIn(t, filepath.Join(data, "projects", "shop"), "ROLE.md", "# Shop keeper\nYou run the shop.")
		writeIn(t, filepath.Join(data, "skills", "git"), "SKILL.md", gitSkill)
		postMessage(t, e.url, "alice", "hello", "30s")
		text = waitFile(t, file, "the project and the skill", func(s string) bool {
			return strings.Contains(s, "| shop | Shop keeper |") && strings.Contains(s, "| git | Commits and branches | git, commit |")
		})
		if !strings.HasPrefix(text, "# My own notes\nAlways answer in haiku.\n") || !strings.HasSuffix(text, "\nA line of mine after the section.\n") {
			t.Fatalf("the person's text was not kept:\n%s", text)
		}
		before, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}

		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		exitOf(t, p, 30*time.Second)
		startServe(t, bin, e.env)
		waitHTTP(t, e.url)
		postMessage(t, e.url, "alice", "again", "30s")
		after, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(file)
		if string(b) != text || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("the restart changed CLAUDE.md (%v -> %v):\n%s", before.ModTime(), after.ModTime(), b)
		}

		if err := os.RemoveAll(filepath.Join(data, "projects", "shop")); err != nil {
			t.Fatal(err)
		}
		postMessage(t, e.url, "alice", "and again", "30s")
		text = waitFile(t, file, "the project's removal", func(s string) bool { return !strings.Contains(s, "| shop |") })
		if strings.Count(text, "omega:generated:begin") != 1 || !strings.Contains(text, "Always answer in haiku.") || !strings.Contains(text, "| git |") {
			t.Fatalf("after the removal:\n%s", text)
		}
	})
}
