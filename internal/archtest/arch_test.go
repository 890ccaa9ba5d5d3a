// Package archtest holds the import rules of the module as a test: the
// layering the design describes, checked on every `go test ./...` from
// `go list -deps -json`, so that a forbidden import fails the build
// instead of waiting for review.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/omega-gateway/omega"

// rule forbids the packages under from to depend, directly or not, on
// any package that forbidden reports.
type rule struct {
	name      string
	from      []string // module-relative package prefixes
	forbidden func(dep pkg) bool
	// direct checks only the packages' own imports, for a dependency
	// that is fine to reach through its owner but not to use directly.
	direct bool
	// exempt are packages under from that the rule does not govern.
	exempt []string
}

// pkg is the part of `go list -json` output the rules read.
type pkg struct {
	ImportPath string
	Standard   bool
	Deps       []string
	Imports    []string
}

// sharedChannelPackages are the parts of channels/ every channel uses; any
// other package under channels/ is (part of) a concrete channel, so a new
// channel is governed without editing this file.
var sharedChannelPackages = []string{"registry", "markdown", "channeltest"}

// concreteChannel reports whether path is (part of) a concrete channel.
func concreteChannel(path string) bool {
	rest, ok := strings.CutPrefix(path, module+"/channels/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	return !slices.Contains(sharedChannelPackages, first)
}

var concreteProviders = []string{"providers/claudecode", "providers/httpapi"}

// testKits are packages that exist for tests: doubles and fixtures.
var testKits = []string{"channels/channeltest", "channels/telegram/telegramtest", "channels/whatsapp/whatsapptest", "channels/email/emailtest", "channels/matrix/matrixtest", "channels/slack/slacktest", "channels/signal/signaltest", "channels/discord/discordtest",
	"providers/providertest", "eventstore/storetest", "internal/pgtest", "internal/teststores", "internal/audittest",
	"projections/projectionstest"}

// The layers are folders: a rule names the top-level folders (or
// packages) it governs, so a package added under a folder is governed
// without editing this list.
var rules = []rule{
	{
		// Property 9: the domain is pure, so it is tested with plain
		// table tests and can be reasoned about without I/O.
		name: "domain is the standard library plus uuid",
		from: []string{"domain"},
		forbidden: func(dep pkg) bool {
			return !dep.Standard && dep.ImportPath != "github.com/google/uuid" && !under(dep.ImportPath, "domain")
		},
	},
	{
		// Channels plug in behind the port in channels/; the application
		// must not know which ones exist.
		name: "application packages do not know concrete channels",
		from: []string{"domain", "handlers", "projections", "eventstore"},
		forbidden: func(dep pkg) bool {
			return concreteChannel(dep.ImportPath)
		},
	},
	{
		// A channel describes itself (channels.Descriptor) and the one
		// list of channels is channels/registry: configuration, doctor,
		// rerun and the server's wiring iterate it, so adding a channel
		// is its package and one registry line.
		name: "only channels/registry names the concrete channels",
		from: []string{"app", "cmd"},
		forbidden: func(dep pkg) bool {
			return concreteChannel(dep.ImportPath)
		},
		direct: true,
	},
	{
		// Providers plug in behind the port in providers/ the same way:
		// providers/registry builds the configured one, and everything
		// else speaks to providers.Provider.
		name: "only providers/registry names the concrete providers",
		from: []string{"api", "app", "channels", "cmd", "domain", "eventstore", "handlers", "internal", "projections", "prompts"},
		forbidden: func(dep pkg) bool {
			return slices.ContainsFunc(concreteProviders, func(c string) bool { return under(dep.ImportPath, c) })
		},
		direct: true,
	},
	{
		// Read models are fed by the log, never by the handlers that
		// write it.
		name:      "projections do not import handlers",
		from:      []string{"projections"},
		forbidden: func(dep pkg) bool { return under(dep.ImportPath, "handlers") },
	},
	{
		// The read models declare what they hold; the engine that feeds
		// them depends on them, never the other way round.
		name:      "read models do not import their engine",
		from:      []string{"projections"},
		forbidden: func(dep pkg) bool { return under(dep.ImportPath, "projections/engine") },
		exempt:    []string{"projections/engine", "projections/projectionstest"},
	},
	{
		// Handlers are composed by app/ and driven by api/ and cmd/; they
		// never reach up to them.
		name: "handlers do not import app, api or cmd",
		from: []string{"handlers"},
		forbidden: func(dep pkg) bool {
			return under(dep.ImportPath, "app") || under(dep.ImportPath, "api") || under(dep.ImportPath, "cmd")
		},
	},
	{
		// The turn driver's parts (handlers/pipeline/gather, stream, ...)
		// stand alone behind their own small ports: the driver uses them,
		// never the other way round.
		name: "the driver's parts do not import the driver",
		from: []string{"handlers/pipeline"},
		forbidden: func(dep pkg) bool {
			return dep.ImportPath == module+"/handlers/pipeline"
		},
	},
	{
		// Projections write through the store's dialect-neutral SQL; the
		// PostgreSQL driver belongs to eventstore/postgres.
		name:      "projections do not use lib/pq",
		from:      []string{"projections"},
		forbidden: func(dep pkg) bool { return dep.ImportPath == "github.com/lib/pq" },
		exempt:    testKits, // a kit opens the PostgreSQL store for tests
	},
	{
		// One owner per table: read models are asked through
		// projections.Queries, the log, checkpoints and leases through the
		// event store, so nothing else opens a query.
		name:      "only storage packages use database/sql",
		from:      []string{"domain", "handlers", "api", "cmd"},
		forbidden: func(dep pkg) bool { return dep.ImportPath == "database/sql" },
		direct:    true,
	},
	{
		// Doubles and fixtures serve tests only; a production package
		// that links one ships a fake.
		name: "test kits are imported by tests only",
		from: []string{"api", "app", "channels", "cmd", "domain", "eventstore", "handlers", "internal", "migrations",
			"projections", "prompts", "providers"},
		forbidden: func(dep pkg) bool {
			return slices.ContainsFunc(testKits, func(k string) bool { return under(dep.ImportPath, k) })
		},
		direct: true,
		exempt: testKits, // a kit may build on another
	},
}

// known lists violations that exist today, as "package -> dependency".
// Each must go; the test fails when one disappears so that the list only
// shrinks.
var known = map[string]string{}

func TestImportRules(t *testing.T) {
	found, seen := violations(rules, listPackages(t))
	for _, v := range found {
		t.Error(v)
	}
	for key, why := range known {
		if !seen[key] {
			t.Errorf("known violation %s (%s) is gone: remove it from the list", key, why)
		}
	}
}

// violations applies the rules to the packages; seen are the known
// violations met.
func violations(rules []rule, pkgs map[string]pkg) (found []string, seen map[string]bool) {
	seen = map[string]bool{}
	for _, r := range rules {
		for _, p := range pkgs {
			if p.Standard || !slices.ContainsFunc(r.from, func(f string) bool { return under(p.ImportPath, f) }) ||
				slices.ContainsFunc(r.exempt, func(f string) bool { return under(p.ImportPath, f) }) {
				continue
			}
			// Deps is transitive: a module's subpackages arrive with it, so
			// rules name the packages a programmer would import.
			deps := p.Deps
			if r.direct {
				deps = p.Imports
			}
			for _, d := range deps {
				dep, ok := pkgs[d]
				if !ok || !r.forbidden(dep) {
					continue
				}
				key := p.ImportPath + " -> " + d
				if _, ok := known[key]; ok {
					seen[key] = true
					continue
				}
				found = append(found, fmt.Sprintf("%s: %s imports %s", r.name, strings.TrimPrefix(p.ImportPath, module+"/"), d))
			}
		}
	}
	return found, seen
}

// The registry rule catches a concrete channel imported again where the
// registry should be asked, and lets the registry through.
func TestRegistryRuleCatchesConcreteChannel(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	pkgs := map[string]pkg{}
	for _, rel := range []string{"channels/telegram", "channels/registry", "channels"} {
		pkgs[m(rel)] = pkg{ImportPath: m(rel)}
	}
	add := func(rel string, imports ...string) {
		p := pkg{ImportPath: m(rel)}
		for _, i := range imports {
			p.Imports = append(p.Imports, m(i))
			p.Deps = append(p.Deps, m(i))
		}
		pkgs[p.ImportPath] = p
	}
	add("cmd/omega", "channels/registry", "channels", "channels/telegram")
	add("cmd/rerun", "channels/registry")
	add("app/config", "channels/registry")
	add("app", "channels/whatsapp")
	pkgs[m("channels/whatsapp")] = pkg{ImportPath: m("channels/whatsapp")}
	found, _ := violations(rules, pkgs)
	want := []string{"cmd/omega imports " + m("channels/telegram"), "app imports " + m("channels/whatsapp")}
	if len(found) != len(want) {
		t.Fatalf("violations = %q, want %d naming %q", found, len(want), want)
	}
	for _, w := range want {
		if !slices.ContainsFunc(found, func(f string) bool { return strings.HasSuffix(f, w) }) {
			t.Errorf("violations %q miss %q", found, w)
		}
	}
}

// The provider rule catches a concrete provider imported where the
// registry should be asked.
func TestProviderRuleCatchesConcreteProvider(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	pkgs := map[string]pkg{}
	for _, rel := range []string{"providers", "providers/registry", "providers/claudecode", "providers/httpapi"} {
		pkgs[m(rel)] = pkg{ImportPath: m(rel)}
	}
	pkgs[m("app")] = pkg{ImportPath: m("app"), Imports: []string{m("providers/registry"), m("providers")}}
	pkgs[m("cmd/omega")] = pkg{ImportPath: m("cmd/omega"), Imports: []string{m("providers/httpapi")}}
	found, _ := violations(rules, pkgs)
	want := "only providers/registry names the concrete providers: cmd/omega imports " + m("providers/httpapi")
	if !slices.Equal(found, []string{want}) {
		t.Fatalf("violations = %q, want %q", found, want)
	}
}

func under(path, rel string) bool {
	full := module + "/" + rel
	return path == full || strings.HasPrefix(path, full+"/")
}

// listPackages returns the module's packages and all their dependencies
// by import path. Test files are not included: a test may use a concrete
// double.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list returned only %d packages", len(pkgs))
	}
	return pkgs
}

// maxTopLevel bounds the folders at the top that hold Go code: each is a
// layer, named in the README and in docs/DESIGN.md's layout.
const maxTopLevel = 12

func TestTopLevelFoldersAreTheLayers(t *testing.T) {
	folders := map[string]bool{}
	for p := range listPackages(t) {
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		folders[top] = true
	}
	if len(folders) > maxTopLevel {
		t.Errorf("%d top-level folders hold Go code, at most %d: %v", len(folders), maxTopLevel, slices.Sorted(maps.Keys(folders)))
	}
	for _, doc := range []string{"../../README.md", "../../docs/DESIGN.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for f := range folders {
			if !bytes.Contains(b, []byte("`"+f+"/`")) {
				t.Errorf("%s does not name the folder `%s/`", doc, f)
			}
		}
	}
}
