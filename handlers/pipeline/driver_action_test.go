package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/projects"
	"github.com/omega-gateway/omega/providers"
)

func actionMessage(project string) turn.MessageReceived {
	m := message("A scheduled action is due now.\nAction: water the garden")
	m.Task = &turn.TaskOrigin{ID: "t1", Occurrence: 1, Project: project, Description: "water the garden"}
	return m
}

// A scheduled action runs with the complex model, the full system prompt
// and its project's ROLE.md, even when the sender has a session.
func TestDriverActionTurnUsesComplexModelAndProjectRole(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "garden"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "garden", "ROLE.md"), []byte("You are the gardener."), 0o600); err != nil {
		t.Fatal(err)
	}
	catalog, err := projects.New(f.store, f.reg, dir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	f.rebuild(t, func(d *pipeline.Driver) { d.Projects, d.Config.ModelComplex = catalog, "complex" })
	f.appendSender(t, sender.SessionStarted{Project: "garden", SessionID: "sess-9", Provider: "fake"})
	id := f.turn(t, actionMessage("garden"))
	reqs := f.provider.requests()
	if len(reqs) != 1 || reqs[0].Model != "complex" || reqs[0].SessionID != "" || !strings.Contains(reqs[0].System, "You are the gardener.") {
		t.Fatalf("requests %+v", reqs)
	}
	built := ofType[turn.ContextBuilt](f.events(t, domain.TurnStream(id)))
	if len(built) != 1 || built[0].Project != "garden" || built[0].ProjectsVersion != 1 {
		t.Fatalf("context %+v", built)
	}
}

// A failed action is called again with a backoff, up to three calls, and
// then the failure is reported to the user with its reason.
func TestDriverFailedActionRetriedThenReported(t *testing.T) {
	f := newFixture(t)
	f.driver.Config.ActionBackoff = time.Millisecond
	f.provider.reply = func(context.Context, int, providers.Request) (providers.Response, error) {
		return providers.Response{}, &providers.Error{Class: providers.Server, Provider: "fake", Msg: "overloaded"}
	}
	id := f.turn(t, actionMessage(""))
	if n := len(f.provider.requests()); n != task.MaxDeliveryAttempts {
		t.Fatalf("provider called %d times", n)
	}
	if got := f.channel.texts(); len(got) != 1 || got[0] != i18n.Text(lang, i18n.ErrServer) {
		t.Fatalf("sent %q", got)
	}
	if got := completion(t, f.events(t, domain.TurnStream(id))).Status; got != turn.StatusError {
		t.Fatalf("status %s", got)
	}
}
