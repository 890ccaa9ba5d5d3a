package workspace_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/workspace"
)

func img(path string, size, mod int64) turn.WorkspaceImage {
	return turn.WorkspaceImage{Path: path, Size: size, ModTime: mod}
}

func TestChanged(t *testing.T) {
	tests := []struct {
		name          string
		before, after []turn.WorkspaceImage
		want          []string
	}{
		{"empty", nil, nil, nil},
		{"nothing changed", []turn.WorkspaceImage{img("a.png", 1, 1)}, []turn.WorkspaceImage{img("a.png", 1, 1)}, nil},
		{"new image", nil, []turn.WorkspaceImage{img("a.png", 1, 1)}, []string{"a.png"}},
		{"size changed", []turn.WorkspaceImage{img("a.png", 1, 1)}, []turn.WorkspaceImage{img("a.png", 2, 1)}, []string{"a.png"}},
		{"rewritten in place", []turn.WorkspaceImage{img("a.png", 1, 1)}, []turn.WorkspaceImage{img("a.png", 1, 2)}, []string{"a.png"}},
		{"removed", []turn.WorkspaceImage{img("a.png", 1, 1)}, nil, nil},
		{"mixed, in after's order", []turn.WorkspaceImage{img("a.png", 1, 1), img("b.png", 1, 1)},
			[]turn.WorkspaceImage{img("a.png", 1, 1), img("b.png", 1, 5), img("c.gif", 3, 3)}, []string{"b.png", "c.gif"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workspace.Paths(workspace.Changed(tt.before, tt.after))
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Changed = %q, want %q", got, tt.want)
			}
		})
	}
}

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshot(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  []string
	}{
		{"empty dir", nil, nil},
		{"all five extensions, any case", []string{"a.png", "b.JPG", "c.jpeg", "d.gif", "e.webp"}, []string{"a.png", "b.JPG", "c.jpeg", "d.gif", "e.webp"}},
		{"not images", []string{"notes.txt", "png", "archive.png.zip"}, nil},
		{"top level only: the inbox is not looked into", []string{"inbox/turn/01-photo.png", "top.png"}, []string{"top.png"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				write(t, dir, f, "x")
			}
			got, err := workspace.Snapshot(dir)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(workspace.Paths(got)) != fmt.Sprint(tt.want) {
				t.Errorf("Snapshot = %q, want %q", workspace.Paths(got), tt.want)
			}
		})
	}
	t.Run("missing dir", func(t *testing.T) {
		got, err := workspace.Snapshot(filepath.Join(t.TempDir(), "nope"))
		if err != nil || len(got) != 0 {
			t.Errorf("Snapshot = %v, %v", got, err)
		}
	})
	t.Run("symbolic links are not followed", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "real/secret.png", "x")
		if err := os.Symlink(filepath.Join(dir, "real", "secret.png"), filepath.Join(dir, "link.png")); err != nil {
			t.Skip(err)
		}
		if got, _ := workspace.Snapshot(dir); len(got) != 0 {
			t.Errorf("Snapshot = %v", got)
		}
	})
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestFindAndRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "old.png", "old")
	before, err := workspace.Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.png", "aa")
	write(t, dir, "b.png", "bb")
	write(t, dir, "big.png", "far too big")
	write(t, dir, "c.png", "cc")
	write(t, dir, "copy.png", "user's")
	found, err := workspace.Images{MaxImages: 2, MaxBytes: 6}.Find(ctx, dir, before,
		[]turn.AttachmentRef{{Path: "/elsewhere/01-p.png", SHA256: sum("user's")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := workspace.Paths(found.Images); fmt.Sprint(got) != "[a.png b.png]" || found.Images[0].SHA256 != sum("aa") {
		t.Fatalf("found %+v", found.Images)
	}
	want := []turn.SkippedImage{{Path: "big.png", Size: 11, Reason: turn.ImageSkipTooLarge}, {Path: "c.png", Size: 2, Reason: turn.ImageSkipTooMany},
		{Path: "copy.png", Size: 6, Reason: turn.ImageSkipInbound}}
	if fmt.Sprint(found.Skipped) != fmt.Sprint(want) {
		t.Fatalf("skipped %+v, want %+v", found.Skipped, want)
	}

	data, err := workspace.Images{}.Read(ctx, dir, found.Images[0])
	if err != nil || string(data) != "aa" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	write(t, dir, "b.png", "changed")
	if _, err := (workspace.Images{}).Read(ctx, dir, found.Images[1]); !errors.Is(err, workspace.ErrChanged) {
		t.Fatalf("Read of a changed image: %v", err)
	}
	os.Remove(filepath.Join(dir, "a.png"))
	if _, err := (workspace.Images{}).Read(ctx, dir, found.Images[0]); !errors.Is(err, workspace.ErrChanged) {
		t.Fatalf("Read of a removed image: %v", err)
	}
	// Rewriting the same bytes later counts as a change (new mtime).
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "old.png"), later, later); err != nil {
		t.Fatal(err)
	}
	again, _ := workspace.Images{}.Find(ctx, dir, before, nil)
	if got := workspace.Paths(again.Images); len(got) == 0 || got[len(got)-1] != "old.png" {
		t.Errorf("a rewritten image is not found: %q", got)
	}
}
