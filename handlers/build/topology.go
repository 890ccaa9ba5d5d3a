package build

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	builddom "github.com/omega-gateway/omega/domain/build"
)

// TopologyFile is the file that makes a folder a topology.
const TopologyFile = "TOPOLOGY.toml"

// DefaultTopology is the topology a build uses when none is named.
const DefaultTopology = "development"

// maxAgentBytes bounds one agent file.
const maxAgentBytes = 64 << 10

//go:embed topologies
var embedded embed.FS

// tomlTopology is TOPOLOGY.toml as written.
type tomlTopology struct {
	Topology struct {
		Name        string `toml:"name"`
		Description string `toml:"description"`
		Version     int    `toml:"version"`
	} `toml:"topology"`
	Phases []struct {
		Name      string `toml:"name"`
		Agent     string `toml:"agent"`
		ModelTier string `toml:"model_tier"`
		MaxTurns  int    `toml:"max_turns"`
		PhaseType string `toml:"phase_type"`
		Pre       *struct {
			Type     string   `toml:"type"`
			Paths    []string `toml:"paths"`
			Patterns []string `toml:"patterns"`
		} `toml:"pre_validation"`
		Post  []string `toml:"post_validation"`
		Retry *struct {
			Max      int    `toml:"max"`
			FixAgent string `toml:"fix_agent"`
		} `toml:"retry"`
	} `toml:"phases"`
}

// TopologyError is a topology that cannot be used, with the file and
// line of each problem ("path:line: message").
type TopologyError struct {
	Problems []string
}

func (e *TopologyError) Error() string { return strings.Join(e.Problems, "\n") }

// Deploy writes the embedded topologies into dir (normally
// $OMEGA_DATA_DIR/topologies) where their folder does not exist yet: a
// person's edits are never overwritten.
func Deploy(dir string) error {
	roots, err := fs.ReadDir(embedded, "topologies")
	if err != nil {
		return err
	}
	for _, r := range roots {
		dst := filepath.Join(dir, r.Name())
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if err := copyEmbedded(filepath.Join("topologies", r.Name()), dst); err != nil {
			return fmt.Errorf("deploy topology %s: %w", r.Name(), err)
		}
	}
	return nil
}

func copyEmbedded(src, dst string) error {
	return fs.WalkDir(embedded, src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := embedded.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// LoadTopology reads and validates the topology in dir/<name>.
func LoadTopology(dir, name string) (builddom.Topology, error) {
	if !builddom.ValidName(name) {
		return builddom.Topology{}, fmt.Errorf("topology name %q: use letters, digits, '-' and '_'", name)
	}
	root := filepath.Join(dir, name)
	path := filepath.Join(root, TopologyFile)
	src, err := os.ReadFile(path)
	if err != nil {
		return builddom.Topology{}, fmt.Errorf("topology %s: %w", name, err)
	}
	agents, err := readAgents(filepath.Join(root, "agents"))
	if err != nil {
		return builddom.Topology{}, fmt.Errorf("topology %s: %w", name, err)
	}
	return ParseTopology(path, string(src), agents, name)
}

func readAgents(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if e.IsDir() || !ok || !builddom.ValidName(name) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if len(b) > maxAgentBytes {
			return nil, fmt.Errorf("%s: %d bytes, more than %d", filepath.Join(dir, e.Name()), len(b), maxAgentBytes)
		}
		out[name] = string(b)
	}
	return out, nil
}

var lineOf = regexp.MustCompile(`line (\d+)`)

// ParseTopology parses TOPOLOGY.toml text (path names it in errors) with
// its agents' texts; folder is the topology's folder name, which its
// [topology] name must match.
func ParseTopology(path, src string, agents map[string]string, folder string) (builddom.Topology, error) {
	var raw tomlTopology
	md, err := toml.Decode(src, &raw)
	if err != nil {
		return builddom.Topology{}, &TopologyError{Problems: []string{decodeProblem(path, err)}}
	}
	var problems []string
	for _, k := range md.Undecoded() {
		problems = append(problems, fmt.Sprintf("%s:%d: unknown key %q", path, keyLine(src, k), k.String()))
	}
	t := convert(raw, agents)
	if t.Name == "" {
		t.Name = folder
	}
	if t.Name != folder {
		problems = append(problems, fmt.Sprintf("%s:%d: [topology] name %q differs from its folder %q", path, findKey(src, 0, len(src), "name"), t.Name, folder))
	}
	for _, p := range t.Check() {
		problems = append(problems, fmt.Sprintf("%s:%d: %s", path, phaseKeyLine(src, p.Phase, p.Key), p.Msg))
	}
	if len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool { return lineNo(problems[i]) < lineNo(problems[j]) })
		return builddom.Topology{}, &TopologyError{Problems: problems}
	}
	return t, nil
}

func decodeProblem(path string, err error) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s:%d: %s", path, pe.Position.Line, pe.Message)
	}
	if m := lineOf.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Sprintf("%s:%s: %s", path, m[1], strings.TrimPrefix(err.Error(), "toml: "))
	}
	return fmt.Sprintf("%s:1: %v", path, err)
}

func convert(raw tomlTopology, agents map[string]string) builddom.Topology {
	t := builddom.Topology{Name: raw.Topology.Name, Description: raw.Topology.Description, Version: raw.Topology.Version, Agents: map[string]string{}}
	for _, p := range raw.Phases {
		ph := builddom.Phase{Name: p.Name, Agent: p.Agent, ModelTier: p.ModelTier, MaxTurns: p.MaxTurns, Type: p.PhaseType, Post: p.Post}
		if p.Pre != nil {
			ph.Pre = &builddom.Validation{Type: p.Pre.Type, Paths: p.Pre.Paths, Patterns: p.Pre.Patterns}
		}
		if p.Retry != nil {
			ph.Retry = &builddom.Retry{Max: p.Retry.Max, FixAgent: p.Retry.FixAgent}
		}
		t.Phases = append(t.Phases, ph)
	}
	// Only the agents the phases use travel with the topology.
	probe := builddom.Topology{Phases: t.Phases}
	for _, name := range probe.AgentNames() {
		if text, ok := agents[name]; ok {
			t.Agents[name] = text
		}
	}
	return t
}

var phasesHeader = regexp.MustCompile(`^\s*\[\[\s*phases\s*\]\]`)

// phaseKeyLine finds the line of key in the i-th [[phases]] table (or
// the table's header when the key is not written there; i < 0: the file).
func phaseKeyLine(src string, i int, key string) int {
	lines := strings.Split(src, "\n")
	if i < 0 {
		return max(findKey(src, 0, len(lines), key), 1)
	}
	n := -1
	for l, line := range lines {
		if !phasesHeader.MatchString(line) {
			continue
		}
		n++
		if n != i {
			continue
		}
		end := l + 1
		for end < len(lines) && !phasesHeader.MatchString(lines[end]) {
			end++
		}
		if k := findKey(src, l, end, key); k > 0 {
			return k
		}
		return l + 1
	}
	return 1
}

// findKey is the 1-based line of "key =" within lines [from, to), or 0.
func findKey(src string, from, to int, key string) int {
	re := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(key) + `\s*=`)
	lines := strings.Split(src, "\n")
	for l := from; l < to && l < len(lines); l++ {
		if re.MatchString(lines[l]) {
			return l + 1
		}
	}
	return 0
}

// keyLine is the line of an unknown key: its last piece, searched in the
// whole file.
func keyLine(src string, k toml.Key) int {
	if len(k) == 0 {
		return 1
	}
	return max(findKey(src, 0, strings.Count(src, "\n")+1, k[len(k)-1]), 1)
}

func lineNo(problem string) int {
	parts := strings.SplitN(problem, ":", 3)
	if len(parts) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(parts[1])
	return n
}
