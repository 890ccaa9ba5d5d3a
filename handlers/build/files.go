package build

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	builddom "github.com/omega-gateway/omega/domain/build"
)

// maxArtifacts bounds how many files a phase's record hashes.
const maxArtifacts = 500

// missingPre lists what a phase's pre-validation finds missing in dir.
func missingPre(dir string, v builddom.Validation) []string {
	switch v.Type {
	case builddom.ValidateFileExists:
		return missingFiles(dir, v.Paths)
	case builddom.ValidateFilePatterns:
		if anyFileEndsWith(dir, v.Patterns) {
			return nil
		}
		return []string{"a file ending with " + strings.Join(v.Patterns, ", ")}
	}
	return nil
}

// missingFiles lists the paths (relative to dir) that do not exist.
func missingFiles(dir string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			out = append(out, p)
		}
	}
	return out
}

func anyFileEndsWith(dir string, patterns []string) bool {
	found := errors.New("found")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil //nolint:nilerr // an unreadable entry is not a match
		}
		for _, p := range patterns {
			if strings.HasSuffix(d.Name(), p) {
				return found
			}
		}
		return nil
	})
	return errors.Is(err, found)
}

// hashArtifacts maps each file under dir (slash paths) to its SHA-256.
func hashArtifacts(dir string) map[string]string {
	out := map[string]string{}
	var paths []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil //nolint:nilerr // what cannot be read is not hashed
		}
		paths = append(paths, path)
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths[:min(len(paths), maxArtifacts)] {
		if h, err := fileHash(p); err == nil {
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = h
		}
	}
	return out
}

func fileHash(path string) (string, error) {
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
