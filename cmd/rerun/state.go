package rerun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
)

// senderState returns the events that make up the sender's state as the
// turn started (before the turn's first step): the sender's profile
// stream and the sender's earlier turns and summaries, and the skills, in
// log order.
func senderState(ctx context.Context, src Source, tn []domain.Event, msg turn.MessageReceived) ([]domain.Event, error) {
	cutoff := tn[0].ID
	if len(tn) > 1 {
		cutoff = tn[1].ID
	}
	profile := sender.SenderStream(msg.Channel, msg.SenderID)
	later := map[string]bool{} // turns that arrived after this one
	var out []domain.Event
	links := &linkedProfile{}
	for after := int64(0); ; {
		evs, err := src.ReadAll(ctx, after, 1000)
		if err != nil {
			return nil, fmt.Errorf("read the log: %w", err)
		}
		if len(evs) == 0 {
			return nil, errors.New("the turn's start is not in the log")
		}
		for _, e := range evs {
			if e.ID == cutoff {
				return links.merge(out, msg), nil
			}
			if e.StreamID == tn[0].StreamID {
				continue
			}
			links.see(e)
			if !copied(e, profile, msg) {
				continue
			}
			if e.Type == "MessageReceived" && e.Position > tn[0].Position {
				later[e.StreamID] = true
			}
			if !later[e.StreamID] {
				out = append(out, e)
			}
		}
		after = evs[len(evs)-1].Position
	}
}

// copied reports whether an event before the turn is part of the state a
// re-run copies: the sender's own (see belongs), and the skills with
// their lessons as they were.
func copied(e domain.Event, profile string, msg turn.MessageReceived) bool {
	return isSkillStream(e.StreamID) || belongs(e, profile, msg)
}

func isSkillStream(id string) bool {
	return id == catalog.SkillsStream || strings.HasPrefix(id, catalog.SkillStream(""))
}

// definitions are the project definitions the turn's context read and
// the build topologies as it ended.
func definitions(ctx context.Context, src Source, projectsVersion int64, last domain.Event) ([]domain.Event, error) {
	defs, err := projectDefinitions(ctx, src, projectsVersion)
	if err != nil {
		return nil, err
	}
	tops, err := topologyDefinitions(ctx, src, last)
	return append(defs, tops...), err
}

// topologyDefinitions are the build topologies as the turn ended: a turn
// that starts a build imports the topology folder while it runs, and
// its reply names what it imported.
func topologyDefinitions(ctx context.Context, src Source, last domain.Event) ([]domain.Event, error) {
	evs, err := src.Load(ctx, build.TopologiesStream, 1)
	if err != nil {
		return nil, fmt.Errorf("load the build topologies: %w", err)
	}
	n := 0
	for n < len(evs) && !evs[n].RecordedAt.After(last.RecordedAt) {
		n++
	}
	return evs[:n], nil
}

// projectDefinitions are the project definitions the turn's context read:
// the projects stream up to the version it recorded.
func projectDefinitions(ctx context.Context, src Source, version int64) ([]domain.Event, error) {
	if version <= 0 {
		return nil, nil
	}
	evs, err := src.Load(ctx, catalog.ProjectsStream, 1)
	if err != nil {
		return nil, fmt.Errorf("load the project definitions: %w", err)
	}
	if int64(len(evs)) < version {
		return nil, fmt.Errorf("the projects stream has %d events, the turn read %d", len(evs), version)
	}
	return evs[:version], nil
}

// belongs reports whether an event is part of the sender's state: their
// profile, what they caused, and who may talk (pairings) and whose
// profile a sender uses (identity links), decided on those streams as a
// whole. Tasks stay out: in the scratch their due times would fire now,
// beside the turn.
func belongs(e domain.Event, profile string, msg turn.MessageReceived) bool {
	if strings.HasPrefix(e.StreamID, "task-") {
		return false
	}
	global := e.StreamID == access.SenderPairingStream || e.StreamID == identity.IdentityStream
	return global || e.StreamID == profile || (e.Metadata.Channel == msg.Channel && e.Metadata.Sender == msg.SenderID)
}

// linkedProfile keeps the profile streams and the identity links seen
// before a turn, so that a linked sender's re-run starts from the
// canonical identity's profile, as the turn did.
type linkedProfile struct {
	ids      identity.Identities
	registry *domain.Registry
	profiles map[string][]domain.Event
	order    map[int64]int // position -> delivery order (positions are not that order on PostgreSQL)
}

func (l *linkedProfile) see(e domain.Event) {
	if l.order == nil {
		l.order = map[int64]int{}
	}
	l.order[e.Position] = len(l.order)
	switch {
	case e.StreamID == identity.IdentityStream:
		if l.registry == nil {
			l.registry = app.NewRegistry()
		}
		if p, err := l.registry.Decode(e); err == nil {
			l.ids.Apply(p, e.Version, e.RecordedAt)
		}
	case strings.HasPrefix(e.StreamID, "sender-"):
		if l.profiles == nil {
			l.profiles = map[string][]domain.Event{}
		}
		l.profiles[e.StreamID] = append(l.profiles[e.StreamID], e)
	}
}

// merge adds the canonical profile's events to out (in log order) when
// the sender was linked to another identity.
func (l *linkedProfile) merge(out []domain.Event, msg turn.MessageReceived) []domain.Event {
	canonical := l.ids.Resolve(msg.Sender()).Stream()
	if canonical == msg.Sender().Stream() {
		return out
	}
	have := map[int64]bool{}
	for _, e := range out {
		have[e.Position] = true
	}
	for _, e := range l.profiles[canonical] {
		if !have[e.Position] {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b domain.Event) int { return cmp.Compare(l.order[a.Position], l.order[b.Position]) })
	return out
}
