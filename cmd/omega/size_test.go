package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestNoReflectMethodInBinary keeps the linker's removal of unused methods
// working for the omega binary. One reachable call of
// reflect.Value.MethodByName with a name known only at run time (as
// text/template and html/template make to evaluate {{.Name}}) makes the
// linker keep every exported method of every type: about 6 MB more
// executable and 3.5 MiB more resident memory in `omega serve`
// (docs/BENCHMARKS.md, issue 12). The linker marks such functions
// <ReflectMethod> in its dependency dump.
func TestNoReflectMethodInBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("links the binary")
	}
	cmd := exec.Command("go", "build", "-ldflags=-dumpdep", "-o", t.TempDir()+"/omega", ".")
	var dump bytes.Buffer
	cmd.Stderr = &dump
	if err := cmd.Run(); err != nil {
		t.Fatalf("build: %v\n%.2000s", err, dump.String())
	}
	var culprits []string
	sc := bufio.NewScanner(&dump)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "<ReflectMethod>") {
			continue
		}
		// "caller -> callee" with the mark after the one that calls
		// MethodByName; the chain leading there is one line up each.
		f := strings.TrimSpace(line[:strings.Index(line, "<ReflectMethod>")])
		if i := strings.LastIndex(f, "-> "); i >= 0 {
			f = f[i+3:]
		}
		if !seen[f] {
			seen[f] = true
			culprits = append(culprits, f)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(culprits) > 0 {
		t.Errorf("the binary reaches a method lookup by name (for example text/template or html/template execution), "+
			"so the linker keeps every exported method of every type; marked: %s\n"+
			"find who reaches it with: go build -ldflags=-dumpdep ./cmd/omega 2>&1 | grep -B2 ReflectMethod",
			strings.Join(culprits, ", "))
	}
}
