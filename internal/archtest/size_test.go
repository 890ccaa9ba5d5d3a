package archtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The size limits of the layout: a package or file past them is split
// into cohesive parts rather than grown, so each stays readable whole.
const (
	maxPackageLines = 1500
	maxFileLines    = 500
)

// sizeExempt are test doubles, module-relative, that fake a whole
// platform or suite in one place; they are not counted.
var sizeExempt = []string{
	"channels/telegram/telegramtest/server.go",
	"eventstore/storetest/suite.go",
}

// sourceFile is one non-test Go file of a package and its line count.
type sourceFile struct {
	rel   string // module-relative path
	lines int
}

// sizeViolations names each package over maxPkg lines and each file over
// maxFile lines, with its count. files maps a module-relative package
// directory to its non-test, non-exempt files.
func sizeViolations(files map[string][]sourceFile, maxPkg, maxFile int) []string {
	var found []string
	for dir, fs := range files {
		total := 0
		for _, f := range fs {
			total += f.lines
			if f.lines > maxFile {
				found = append(found, fmt.Sprintf("file %s has %d lines, at most %d", f.rel, f.lines, maxFile))
			}
		}
		if total > maxPkg {
			found = append(found, fmt.Sprintf("package %s has %d lines in non-test files, at most %d", dir, total, maxPkg))
		}
	}
	slices.Sort(found)
	return found
}

// moduleSources reads the non-test Go files of every package of the module,
// counting lines the way `wc -l` does.
func moduleSources(t *testing.T) map[string][]sourceFile {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]sourceFile{}
	for p := range listPackages(t) {
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			continue
		}
		paths, err := filepath.Glob(filepath.Join(root, rel, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			name := rel + "/" + filepath.Base(path)
			if strings.HasSuffix(path, "_test.go") || slices.Contains(sizeExempt, name) {
				continue
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files[rel] = append(files[rel], sourceFile{rel: name, lines: bytes.Count(b, []byte("\n"))})
		}
	}
	if len(files) < 10 {
		t.Fatalf("found only %d packages with Go files", len(files))
	}
	return files
}

func TestPackageAndFileSize(t *testing.T) {
	for _, v := range sizeViolations(moduleSources(t), maxPackageLines, maxFileLines) {
		t.Error(v)
	}
}

// The size rule fires on a package and a file past the limits, and only
// on those.
func TestSizeRuleCatchesLargePackageAndFile(t *testing.T) {
	files := map[string][]sourceFile{
		"api/big":   {{rel: "api/big/a.go", lines: 400}, {rel: "api/big/b.go", lines: 400}},
		"api/small": {{rel: "api/small/a.go", lines: 300}},
		"api/long":  {{rel: "api/long/a.go", lines: 301}},
	}
	got := sizeViolations(files, 700, 300)
	want := []string{
		"file api/big/a.go has 400 lines, at most 300",
		"file api/big/b.go has 400 lines, at most 300",
		"file api/long/a.go has 301 lines, at most 300",
		"package api/big has 800 lines in non-test files, at most 700",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
}
