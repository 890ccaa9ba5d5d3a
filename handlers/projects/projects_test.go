package projects_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/projects"
	"github.com/omega-gateway/omega/internal/teststores"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func registry() *domain.Registry {
	r := events.NewRegistry()
	return r
}

func writeRole(t *testing.T, dir, name, role string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, projects.RoleFile), []byte(role), 0o644); err != nil {
		t.Fatal(err)
	}
}

func types(t *testing.T, s eventstore.Store) []string {
	t.Helper()
	evs, err := s.Load(context.Background(), catalog.ProjectsStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Type+" "+string(e.Data))
	}
	return out
}

// Each change of the folder is one event; an unchanged folder appends
// nothing; concurrent importers record each change once.
func TestSync(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			store, reg, dir := b.Open(t), registry(), t.TempDir()
			cat, err := projects.New(store, reg, dir, quiet)
			if err != nil {
				t.Fatal(err)
			}
			writeRole(t, dir, "trader", "You trade.")
			writeRole(t, dir, "chef", "You cook.")
			if err := os.MkdirAll(filepath.Join(dir, "no-role"), 0o755); err != nil {
				t.Fatal(err)
			}
			// Several processes import the same folder at once.
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, _ := projects.New(store, reg, dir, quiet)
					if _, err := c.Sync(ctx); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if got := types(t, store); len(got) != 2 {
				t.Fatalf("after concurrent imports: %q", got)
			}
			p, err := cat.Sync(ctx)
			if err != nil || len(types(t, store)) != 2 {
				t.Fatalf("an unchanged folder appended: %v %q", err, types(t, store))
			}
			if names := p.Names(); len(names) != 2 || names[0] != "chef" || p.Role("trader") != "You trade." {
				t.Fatalf("projects = %+v", p)
			}

			writeRole(t, dir, "trader", "You trade carefully.")
			if err := os.RemoveAll(filepath.Join(dir, "chef")); err != nil {
				t.Fatal(err)
			}
			p, err = cat.Sync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := types(t, store)
			if len(got) != 4 || p.Has("chef") || p.Role("trader") != "You trade carefully." || p.Version != 4 {
				t.Fatalf("after a change and a removal: %+v %q", p, got)
			}
			want := catalog.ProjectRoleChanged{}.EventType()
			if e, err := store.Load(ctx, catalog.ProjectsStream, 3); err != nil || e[0].Type != want || e[1].Type != "ProjectRemoved" {
				t.Fatalf("events 3-4: %v %v", e, err)
			}
			// The log is what Load reads: no folder needed.
			ro, _ := projects.New(store, reg, "", quiet)
			if p2, err := ro.Sync(ctx); err != nil || p2.Role("trader") != "You trade carefully." || p2.Has("chef") {
				t.Fatalf("read-only catalog: %+v %v", p2, err)
			}
		})
	}
}

func TestReconcile(t *testing.T) {
	var p catalog.Projects
	for i, e := range p.Reconcile(map[string]string{"a": "A", "b": "B"}) {
		p.Apply(e, int64(i+1), zero)
	}
	cases := []struct {
		name  string
		found map[string]string
		want  []string
	}{
		{"unchanged", map[string]string{"a": "A", "b": "B"}, nil},
		{"changed", map[string]string{"a": "A2", "b": "B"}, []string{"ProjectRoleChanged"}},
		{"removed", map[string]string{"a": "A"}, []string{"ProjectRemoved"}},
		{"added", map[string]string{"a": "A", "b": "B", "c": ""}, []string{"ProjectDefined"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := p.Reconcile(c.found)
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want %v", got, c.want)
			}
			for i := range got {
				if got[i].EventType() != c.want[i] {
					t.Errorf("event %d = %s, want %s", i, got[i].EventType(), c.want[i])
				}
			}
		})
	}
}

var zero = time.Time{}
