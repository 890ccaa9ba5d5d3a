// Package workspace finds the images a provider made in its working
// directory during a turn: a snapshot of the top-level image files before
// the call (path, size, modification time), compared with one after; the
// new or changed images are hashed and chosen within the platform limits.
// It reads the file system only; the turn records what it found.
package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/omega-gateway/omega/domain/turn"
)

// Defaults: at most ten images per turn, each at most 10 MB (Telegram's
// limit for a photo; WhatsApp takes 16 MB).
const (
	DefaultMaxImages = 10
	DefaultMaxBytes  = 10 << 20
)

// ErrChanged: the image is not the one found (changed or removed since).
var ErrChanged = errors.New("workspace image changed since it was found")

// mimes are the image extensions recognised, with their MIME types.
var mimes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
}

// IsImage reports whether name has an image extension (any case).
func IsImage(name string) bool {
	_, ok := mimes[strings.ToLower(filepath.Ext(name))]
	return ok
}

// MIME is the image type its name's extension stands for.
func MIME(name string) string {
	return mimes[strings.ToLower(filepath.Ext(name))]
}

// Snapshot lists the regular image files at the top of dir, by name. A
// missing directory holds no images. Symbolic links are not followed:
// only files the provider wrote in the workspace count.
func Snapshot(dir string) ([]turn.WorkspaceImage, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace snapshot %s: %w", dir, err)
	}
	var out []turn.WorkspaceImage
	for _, e := range entries {
		if !e.Type().IsRegular() || !IsImage(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, turn.WorkspaceImage{Path: e.Name(), Size: info.Size(), ModTime: info.ModTime().UnixNano()})
	}
	return out, nil
}

// Changed returns the images of after that are not in before, or whose
// size or modification time differ, in after's order.
func Changed(before, after []turn.WorkspaceImage) []turn.WorkspaceImage {
	was := make(map[string]turn.WorkspaceImage, len(before))
	for _, b := range before {
		was[b.Path] = b
	}
	var out []turn.WorkspaceImage
	for _, a := range after {
		if b, ok := was[a.Path]; ok && b.Size == a.Size && b.ModTime == a.ModTime {
			continue
		}
		out = append(out, a)
	}
	return out
}

// Images finds and reads workspace images within limits.
type Images struct {
	MaxImages int   // per turn (0: DefaultMaxImages)
	MaxBytes  int64 // per image (0: DefaultMaxBytes)
}

// Snapshot lists dir's images (see Snapshot).
func (Images) Snapshot(_ context.Context, dir string) ([]turn.WorkspaceImage, error) {
	return Snapshot(dir)
}

// Find compares dir with before and returns the new or changed images to
// send, hashed, and the ones skipped: too large, beyond the per-turn
// count, unreadable, or the same bytes as an image the user sent with the
// turn (inbound), which is never echoed back.
func (x Images) Find(_ context.Context, dir string, before []turn.WorkspaceImage, inbound []turn.AttachmentRef) (turn.WorkspaceImagesFound, error) {
	after, err := Snapshot(dir)
	if err != nil {
		return turn.WorkspaceImagesFound{}, err
	}
	theirs := map[string]bool{}
	for _, a := range inbound {
		if a.SHA256 != "" {
			theirs[a.SHA256] = true
		}
	}
	maxCount, maxBytes := cmpOr(x.MaxImages, DefaultMaxImages), cmpOr(x.MaxBytes, DefaultMaxBytes)
	var found turn.WorkspaceImagesFound
	for _, img := range Changed(before, after) {
		skip := func(reason string) {
			found.Skipped = append(found.Skipped, turn.SkippedImage{Path: img.Path, Size: img.Size, Reason: reason})
		}
		if img.Size > maxBytes {
			skip(turn.ImageSkipTooLarge)
			continue
		}
		sum, err := hashFile(filepath.Join(dir, img.Path))
		switch {
		case err != nil:
			skip(turn.ImageSkipUnread)
		case theirs[sum]:
			skip(turn.ImageSkipInbound)
		case len(found.Images) >= maxCount:
			skip(turn.ImageSkipTooMany)
		default:
			img.SHA256 = sum
			found.Images = append(found.Images, img)
		}
	}
	return found, nil
}

// Read returns the image's bytes, or ErrChanged when the file is no longer
// the one found (its hash differs, or it is gone).
func (Images) Read(_ context.Context, dir string, img turn.WorkspaceImage) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, filepath.Base(img.Path)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", img.Path, ErrChanged)
	}
	if err != nil {
		return nil, fmt.Errorf("read workspace image %s: %w", img.Path, err)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != img.SHA256 {
		return nil, fmt.Errorf("%s: %w", img.Path, ErrChanged)
	}
	return data, nil
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func cmpOr[T int | int64](a, b T) T {
	if a > 0 {
		return a
	}
	return b
}

// Paths lists the images' paths, for logs.
func Paths(imgs []turn.WorkspaceImage) []string {
	out := make([]string, len(imgs))
	for i, img := range imgs {
		out[i] = img.Path
	}
	return slices.Clip(out)
}
