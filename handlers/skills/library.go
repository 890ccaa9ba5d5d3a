package skills

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/providers"
)

// Skill is a skill as the model sees it: its latest definition in the log
// and the lessons SKILL_IMPROVE recorded for it.
type Skill struct {
	catalog.SkillDefined
	Lessons []string
}

// Key is the skill's key (see catalog.SkillKey).
func (s Skill) Key() string { return catalog.SkillKey(s.Name) }

// Instructions is the skill's body followed by its lessons.
func (s Skill) Instructions() string {
	if len(s.Lessons) == 0 {
		return s.Body
	}
	return s.Body + "\n\nLessons learned for this skill:\n- " + strings.Join(s.Lessons, "\n- ")
}

// Library imports the skill folders into the log and reads skills back
// from it.
type Library struct {
	store  eventstore.Store
	reg    *domain.Registry
	dir    string
	logger *slog.Logger

	mu sync.Mutex
	// env holds the MCP servers' environment values read from the files,
	// by skill key and server name: secrets, kept out of the log.
	env map[string]map[string]map[string]string
	// reported remembers the broken files already logged (path -> hash of
	// the content), so that a bad file is reported once per version.
	reported map[string]string
	// names maps a folder to the key of the skill its file last defined,
	// so that a broken file keeps that skill (and its MCP env) as it was.
	names map[string]string
}

// New returns a library of the skills under dir ("" or a missing folder:
// nothing is imported, the log's skills are still read).
func New(store eventstore.Store, reg *domain.Registry, dir string, logger *slog.Logger) (*Library, error) {
	if store == nil || reg == nil || logger == nil {
		return nil, errors.New("skills: library needs a store, registry and logger")
	}
	return &Library{store: store, reg: reg, dir: dir, logger: logger,
		env: map[string]map[string]map[string]string{}, reported: map[string]string{}, names: map[string]string{}}, nil
}

// Sync imports the skill folders: a new or changed SKILL.md records a
// SkillDefined, a removed folder a SkillRemoved, an unchanged one
// nothing. A broken SKILL.md is logged with its file and line and
// skipped (its last good definition stays); the others still load. When
// the skills folder does not exist nothing is imported.
func (l *Library) Sync(ctx context.Context) error {
	if l.dir == "" {
		return nil
	}
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read skills folder %s: %w", l.dir, err)
	}
	var (
		found []catalog.SkillDefined
		keep  []string
		env   = map[string]map[string]map[string]string{}
	)
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		f, ok := l.load(e.Name())
		l.mu.Lock()
		if !ok {
			key := cmp.Or(l.names[e.Name()], catalog.SkillKey(e.Name()))
			keep = append(keep, key)
			env[key] = l.env[key]
		} else {
			found = append(found, f.Def)
			env[catalog.SkillKey(f.Def.Name)] = f.Env
			l.names[e.Name()] = catalog.SkillKey(f.Def.Name)
		}
		l.mu.Unlock()
	}
	l.mu.Lock()
	l.env = env
	l.mu.Unlock()
	return l.record(ctx, found, keep)
}

// load reads and parses one skill folder; false when it is broken.
func (l *Library) load(folder string) (File, bool) {
	path := filepath.Join(l.dir, folder, FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		l.report(path, "", "skill skipped: cannot read its SKILL.md", err)
		return File{}, false
	}
	f, err := Parse(path, folder, b)
	if err != nil {
		l.report(path, string(b), "skill skipped: bad SKILL.md", err)
		return File{}, false
	}
	f.Def.File = filepath.Join(folder, FileName)
	l.mu.Lock()
	delete(l.reported, path)
	l.mu.Unlock()
	return f, true
}

func (l *Library) report(path, content, msg string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seen, ok := l.reported[path]; ok && seen == content {
		return
	}
	l.reported[path] = content
	l.logger.Error(msg, "file", path, "err", err)
}

// record appends what the files change, with the catalogue's version as
// the expected one; a concurrent import (another process) is read and
// the decision made again.
func (l *Library) record(ctx context.Context, found []catalog.SkillDefined, keep []string) error {
	for attempt := 0; ; attempt++ {
		cat, err := l.Catalog(ctx)
		if err != nil {
			return err
		}
		payloads := cat.Import(found, keep)
		if len(payloads) == 0 {
			return nil
		}
		evs, err := domain.NewEvents(domain.Metadata{}, payloads...)
		if err != nil {
			return err
		}
		_, err = l.store.Append(ctx, catalog.SkillsStream, eventstore.Exact(cat.Version), evs...)
		if err == nil {
			for _, p := range payloads {
				l.logger.Info("skill imported", "event", p.EventType(), "skill", skillName(p))
			}
			return nil
		}
		if !errors.Is(err, eventstore.ErrConcurrency) || attempt >= 5 {
			return fmt.Errorf("record skills: %w", err)
		}
	}
}

func skillName(p domain.Payload) string {
	switch e := p.(type) {
	case catalog.SkillDefined:
		return e.Name
	case catalog.SkillRemoved:
		return e.Name
	}
	return ""
}

// Catalog folds the skills stream.
func (l *Library) Catalog(ctx context.Context) (catalog.SkillCatalog, error) {
	var cat catalog.SkillCatalog
	if err := l.fold(ctx, catalog.SkillsStream, &cat); err != nil {
		return cat, err
	}
	return cat, nil
}

type folder interface {
	Apply(p domain.Payload, version int64, at time.Time)
}

func (l *Library) fold(ctx context.Context, stream string, into folder) error {
	evs, err := l.store.Load(ctx, stream, 1)
	if err != nil {
		return fmt.Errorf("load %s: %w", stream, err)
	}
	for _, e := range evs {
		p, err := l.reg.Decode(e)
		if err != nil {
			return fmt.Errorf("load %s: %w", stream, err)
		}
		into.Apply(p, e.Version, e.RecordedAt)
	}
	return nil
}

// Skills lists the skills of the log, by key, each with its lessons.
func (l *Library) Skills(ctx context.Context) ([]Skill, error) {
	cat, err := l.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Skill, 0, len(cat.Skills))
	for _, k := range cat.Names() {
		var lessons catalog.Skill
		if err := l.fold(ctx, catalog.SkillStream(k), &lessons); err != nil {
			return nil, err
		}
		out = append(out, Skill{SkillDefined: cat.Skills[k], Lessons: lessons.Lessons})
	}
	return out, nil
}

// Matching returns the skills whose triggers message matches.
func Matching(all []Skill, message string) []Skill {
	var out []Skill
	for _, s := range all {
		if Matches(message, s.Triggers) {
			out = append(out, s)
		}
	}
	return out
}

// MCPServers returns the MCP servers of the named skills as the log
// defines them, with the environment values of their files (only the
// variables the log names). Two skills' servers of one name are told
// apart as "skill-server".
func (l *Library) MCPServers(ctx context.Context, names []string) ([]providers.MCPServer, error) {
	if len(names) == 0 {
		return nil, nil
	}
	cat, err := l.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []providers.MCPServer
	seen := map[string]bool{}
	for _, n := range names {
		def, ok := cat.Skills[catalog.SkillKey(n)]
		if !ok {
			continue
		}
		for _, s := range def.MCPServers {
			name := s.Name
			if seen[name] {
				name = catalog.SkillKey(def.Name) + "-" + s.Name
			}
			seen[name] = true
			out = append(out, providers.MCPServer{Name: name, Command: s.Command, Args: slices.Clone(s.Args),
				Env: l.envOf(catalog.SkillKey(def.Name), s)})
		}
	}
	return out, nil
}

func (l *Library) envOf(skill string, s catalog.MCPServerDef) map[string]string {
	values := l.env[skill][s.Name]
	if len(s.Env) == 0 || values == nil {
		return nil
	}
	out := map[string]string{}
	for _, k := range s.Env {
		if v, ok := values[k]; ok {
			out[k] = v
		}
	}
	return out
}

// ServerNames lists the "skill/server" names of the skills' MCP servers,
// for the record (never their environment).
func ServerNames(skills []Skill) []string {
	var out []string
	for _, s := range skills {
		for _, m := range s.MCPServers {
			out = append(out, s.Key()+"/"+m.Name)
		}
	}
	return out
}
