package build

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The embedded default deploys, parses and has the seed's seven phases;
// a second deploy leaves a person's edit alone.
func TestDefaultTopology(t *testing.T) {
	dir := t.TempDir()
	if err := Deploy(dir); err != nil {
		t.Fatal(err)
	}
	tp, err := LoadTopology(dir, DefaultTopology)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range tp.Phases {
		names = append(names, p.Name)
	}
	if strings.Join(names, " ") != "analyst architect test-writer developer qa reviewer delivery" || tp.WorstCaseCalls() != 17 || len(tp.Agents) != 7 {
		t.Fatalf("phases %v, worst case %d, agents %d", names, tp.WorstCaseCalls(), len(tp.Agents))
	}
	edited := filepath.Join(dir, DefaultTopology, "agents", "build-qa.md")
	if err := os.WriteFile(edited, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Deploy(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(edited); string(b) != "mine" {
		t.Fatalf("deploy overwrote an edit: %q", b)
	}
}

func TestParseTopologyErrors(t *testing.T) {
	agents := map[string]string{"a": "x"}
	cases := []struct{ src, want string }{
		{"[topology]\nname = \"t\"\n[[phases]]\nname = \"p\"\nagent = \"a\"\nphase_type = \"standard\"\ncolour = \"red\"\n", `T.toml:7: unknown key "phases.colour"`},
		{"[[phases]]\nname = \"p\"\nagent = \"a\"\nphase_type = \"standard\"\n[[phases]]\nname = \"p\"\nagent = \"a\"\nphase_type = \"standard\"\n", `T.toml:6: phase name "p" is used twice`},
		{"[topology]\nname = \"other\"\n[[phases]]\nname = \"p\"\nagent = \"a\"\nphase_type = \"standard\"\n", `T.toml:2: [topology] name "other" differs from its folder "t"`},
		{"[topology]\nname = \"t\"\n", `T.toml:1: the topology has no [[phases]]`},
	}
	for _, c := range cases {
		_, err := ParseTopology("T.toml", c.src, agents, "t")
		var te *TopologyError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTopology(%q) = %v, want %q", c.src, err, c.want)
		}
	}
}
