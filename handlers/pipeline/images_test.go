package pipeline_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/workspace"
	"github.com/omega-gateway/omega/providers"
)

// photoChannel is the fixture's channel that also keeps the photos sent.
type photoChannel struct {
	*fakeChannel
	pmu    sync.Mutex
	photos []channels.Attachment
}

func (c *photoChannel) SendPhotoResult(_ context.Context, _ string, photo channels.Attachment, _ string) (channels.SendResult, error) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.photos = append(c.photos, photo)
	return channels.SendResult{Chunks: 1, PlatformIDs: []string{fmt.Sprintf("photo-%d", len(c.photos))}}, nil
}

func (c *photoChannel) SendPhoto(ctx context.Context, chat string, photo channels.Attachment, caption string) error {
	_, err := c.SendPhotoResult(ctx, chat, photo, caption)
	return err
}

func (c *photoChannel) Channel(name string) (channels.Channel, bool) { return c, name == chanName }

func (c *photoChannel) names() []string {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	var out []string
	for _, p := range c.photos {
		out = append(out, p.Name)
	}
	return out
}

func withPhotos(f *fixture) *photoChannel {
	ch := &photoChannel{fakeChannel: f.channel}
	f.driver.Channels = ch
	return ch
}

func writeFile(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func sum(data string) string {
	s := sha256.Sum256([]byte(data))
	return hex.EncodeToString(s[:])
}

// The provider draws a chart, rewrites an old picture and copies the
// user's photo into the workspace; only the chart and the rewritten
// picture go to the user, after the reply, each once and on record.
func TestDriverSendsTheImagesTheProviderMade(t *testing.T) {
	f := newFixture(t)
	ch := withPhotos(f)
	dir := f.driver.Config.Workspace
	writeFile(t, dir, "old.png", "old picture")
	writeFile(t, dir, "kept.jpg", "untouched picture")
	f.provider.reply = func(_ context.Context, _ int, req providers.Request) (providers.Response, error) {
		writeFile(t, req.WorkDir, "chart.png", "a chart")
		writeFile(t, req.WorkDir, "old.png", "old picture, redrawn")
		writeFile(t, req.WorkDir, "notes.txt", "not an image")
		writeFile(t, req.WorkDir, "theirs.png", "the user's photo")
		return providers.Response{Text: "hola"}, nil
	}
	msg := message("dibuja")
	msg.Attachments = []turn.AttachmentRef{{Name: "p.png", MIME: "image/png", Path: filepath.Join(dir, "inbox", "t", "01-p.png"), Size: 16, SHA256: sum("the user's photo")}}
	id := f.turn(t, msg)

	if got := ch.names(); len(got) != 2 || got[0] != "chart.png" || got[1] != "old.png" {
		t.Fatalf("photos sent %q, want chart.png and old.png", got)
	}
	if got := f.channel.texts(); len(got) != 1 || got[0] != "hola" {
		t.Fatalf("texts %q", got)
	}
	ps := f.events(t, domain.TurnStream(id))
	found := ofType[turn.WorkspaceImagesFound](ps)
	if len(found) != 1 || len(found[0].Skipped) != 1 || found[0].Skipped[0].Reason != turn.ImageSkipInbound {
		t.Fatalf("found %+v, want theirs.png skipped as the user's", found)
	}
	sent := ofType[turn.WorkspaceImageSent](ps)
	if len(sent) != 2 || sent[0].SHA256 != sum("a chart") || sent[0].PlatformIDs[0] != "photo-1" {
		t.Fatalf("sent %+v", sent)
	}
	// The reply goes first, the images after it.
	var order []string
	for _, p := range ps {
		switch p.(type) {
		case turn.ReplySent, turn.WorkspaceImageSent, turn.TurnCompleted:
			order = append(order, p.EventType())
		}
	}
	if fmt.Sprint(order) != "[ReplySent WorkspaceImageSent WorkspaceImageSent TurnCompleted]" {
		t.Fatalf("order %v", order)
	}
}

// A turn whose provider makes no image records the snapshot without its
// directory (the workspace) and no finding: it completes after the reply.
func TestDriverRecordsNoFindingWhenNoImageIsNew(t *testing.T) {
	f := newFixture(t)
	ch := withPhotos(f)
	writeFile(t, f.driver.Config.Workspace, "old.png", "old picture")
	ps := f.events(t, domain.TurnStream(f.turn(t, message("hola"))))
	snaps := ofType[turn.WorkspaceImagesSnapshotted](ps)
	if len(snaps) != 1 || snaps[0].Dir != "" || len(snaps[0].Images) != 1 {
		t.Fatalf("snapshots %+v, want one of old.png naming no directory", snaps)
	}
	if n := len(ofType[turn.WorkspaceImagesFound](ps)); n != 0 || len(ch.names()) != 0 {
		t.Fatalf("%d WorkspaceImagesFound, sent %q: want none", n, ch.names())
	}
	if got := completion(t, ps).Status; got != turn.StatusOK {
		t.Fatalf("status %s", got)
	}
}

// Crash resume: the turn sends exactly the images it has no outcome for.
func TestDriverResumedTurnSendsOnlyTheImagesNotYetSent(t *testing.T) {
	opening := func(snapshot turn.WorkspaceImagesSnapshotted) []domain.Payload {
		return []domain.Payload{message("hola"),
			turn.AccessGranted{Reason: "owner channel test"},
			turn.ContextBuilt{ConversationID: "c1", Language: lang, Model: "fast", System: "sys", Prompt: "hola", Message: "hola"},
			snapshot,
			turn.ProviderCalled{Provider: "fake", Model: "fast", Attempt: 1},
			turn.ProviderReplied{Provider: "fake", Model: "fast", Text: "hola"},
			turn.ReplyReady{Text: "hola"},
			turn.ReplySent{Kind: "reply", Text: "hola", Chunks: 1},
		}
	}
	a := turn.WorkspaceImage{Path: "a.png", Size: 1, SHA256: sum("a")}
	b := turn.WorkspaceImage{Path: "b.png", Size: 1, SHA256: sum("b")}
	// The snapshot: empty, in the directory it names (recorded before the
	// directory was left out), or of the workspace as it is (nothing new).
	const empty, named, unchanged = 0, 1, 2
	tests := []struct {
		name      string
		snapshot  int
		after     []domain.Payload
		want      []string
		wantFound int // WorkspaceImagesFound on record after the resume
		// undelivered: an image the channel refused leaves the turn
		// undelivered, not ok.
		undelivered bool
	}{
		{"crashed before finding", empty, nil, []string{"a.png", "b.png"}, 1, false},
		{"crashed before finding, snapshot naming its directory", named, nil, []string{"a.png", "b.png"}, 1, false},
		{"crashed before finding nothing new", unchanged, nil, nil, 0, false},
		{"crashed before the first send", empty, []domain.Payload{turn.WorkspaceImagesFound{Images: []turn.WorkspaceImage{a, b}}}, []string{"a.png", "b.png"}, 1, false},
		{"crashed after the first send", empty, []domain.Payload{turn.WorkspaceImagesFound{Images: []turn.WorkspaceImage{a, b}},
			turn.WorkspaceImageSent{Path: "a.png", SHA256: a.SHA256, Size: 1}}, []string{"b.png"}, 1, false},
		{"crashed after both", empty, []domain.Payload{turn.WorkspaceImagesFound{Images: []turn.WorkspaceImage{a, b}},
			turn.WorkspaceImageSent{Path: "a.png"}, turn.WorkspaceImageFailed{Path: "b.png", Class: "blocked"}}, nil, 1, true},
		{"crashed after finding nothing (recorded before empty findings were left out)", empty,
			[]domain.Payload{turn.WorkspaceImagesFound{}}, nil, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ch := withPhotos(f)
			dir := f.driver.Config.Workspace
			writeFile(t, dir, "a.png", "a")
			writeFile(t, dir, "b.png", "b")
			var snapshot turn.WorkspaceImagesSnapshotted
			switch tt.snapshot {
			case named:
				// The directory named wins over the workspace configured now.
				snapshot.Dir = dir
				f.driver.Config.Workspace = t.TempDir()
			case unchanged:
				imgs, err := workspace.Images{}.Snapshot(context.Background(), dir)
				if err != nil || len(imgs) != 2 {
					t.Fatalf("snapshot %+v, %v", imgs, err)
				}
				snapshot.Images = imgs
			}
			id := f.turn(t, append(opening(snapshot), tt.after...)...)
			if got := ch.names(); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("sent %q after the restart, want %q", got, tt.want)
			}
			if n := len(f.provider.requests()) + len(f.channel.texts()); n != 0 {
				t.Fatalf("%d provider calls or texts after the restart, want none", n)
			}
			ps := f.events(t, domain.TurnStream(id))
			if n := len(ofType[turn.WorkspaceImagesFound](ps)); n != tt.wantFound {
				t.Fatalf("%d WorkspaceImagesFound, want %d", n, tt.wantFound)
			}
			want := turn.StatusOK
			if tt.undelivered {
				want = turn.StatusUndelivered
			}
			if got := completion(t, ps).Status; got != want {
				t.Fatalf("status %s, want %s", got, want)
			}
		})
	}
}

// Limits: a too large image and those beyond the count are skipped on
// record; an image that changed after it was found is not sent.
func TestDriverImageLimitsAndChangedImages(t *testing.T) {
	f := newFixture(t)
	ch := withPhotos(f)
	f.rebuild(t, func(d *pipeline.Driver) { d.Images = workspace.Images{MaxImages: 1, MaxBytes: 10} })
	f.provider.reply = func(_ context.Context, _ int, req providers.Request) (providers.Response, error) {
		writeFile(t, req.WorkDir, "a.png", "small")
		writeFile(t, req.WorkDir, "b.png", "small too")
		writeFile(t, req.WorkDir, "c.png", "far too large for the limit")
		return providers.Response{Text: "hola"}, nil
	}
	id := f.turn(t, message("hola"))
	if got := ch.names(); fmt.Sprint(got) != "[a.png]" {
		t.Fatalf("sent %q, want a.png only", got)
	}
	found := ofType[turn.WorkspaceImagesFound](f.events(t, domain.TurnStream(id)))[0]
	if fmt.Sprint(found.Skipped) != fmt.Sprint([]turn.SkippedImage{{Path: "b.png", Size: 9, Reason: turn.ImageSkipTooMany}, {Path: "c.png", Size: 27, Reason: turn.ImageSkipTooLarge}}) {
		t.Fatalf("skipped %+v", found.Skipped)
	}

	// Found, then changed before the send: recorded as failed, not sent.
	g := newFixture(t)
	gch := withPhotos(g)
	dir := g.driver.Config.Workspace
	writeFile(t, dir, "x.png", "changed since")
	gid := g.turn(t, message("hola"),
		turn.AccessGranted{Reason: "owner channel test"},
		turn.ContextBuilt{ConversationID: "c1", Language: lang, Model: "fast", System: "sys", Prompt: "hola", Message: "hola"},
		turn.WorkspaceImagesSnapshotted{Dir: dir},
		turn.ProviderCalled{Provider: "fake", Model: "fast", Attempt: 1},
		turn.ProviderReplied{Provider: "fake", Model: "fast", Text: "hola"},
		turn.ReplyReady{Text: "hola"},
		turn.ReplySent{Kind: "reply", Text: "hola", Chunks: 1},
		turn.WorkspaceImagesFound{Images: []turn.WorkspaceImage{{Path: "x.png", Size: 1, SHA256: sum("x")}}},
	)
	if got := gch.names(); len(got) != 0 {
		t.Fatalf("sent %q, want nothing", got)
	}
	failed := ofType[turn.WorkspaceImageFailed](g.events(t, domain.TurnStream(gid)))
	if len(failed) != 1 || failed[0].Class != "changed" {
		t.Fatalf("failed %+v", failed)
	}
}

// A turn that was not answered (denied, suppressed) sends no image.
func TestDriverSuppressedTurnSendsNoImage(t *testing.T) {
	f := newFixture(t)
	ch := withPhotos(f)
	f.provider.reply = func(_ context.Context, _ int, req providers.Request) (providers.Response, error) {
		writeFile(t, req.WorkDir, "a.png", "a")
		return providers.Response{Text: "SILENT"}, nil
	}
	msg := message("hola todos")
	msg.IsGroup = true
	id := f.turn(t, msg)
	if got := ch.names(); len(got) != 0 {
		t.Fatalf("sent %q", got)
	}
	if got := completion(t, f.events(t, domain.TurnStream(id))).Status; got != turn.StatusSuppressed {
		t.Fatalf("status %s", got)
	}
}
