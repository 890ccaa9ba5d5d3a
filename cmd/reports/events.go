package reports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

type eventsFilter struct {
	stream, typ string
	after       int64
	limit       int
	follow      bool
	asJSON      bool
}

func eventsCmd() *cobra.Command {
	var f eventsFilter
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the event log (filter by stream or type; --follow to tail it)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.after < 0 {
				return fmt.Errorf("--after must not be negative (got %d)", f.after)
			}
			// Following may start before serve has made the log.
			a, err := cli.Open(cmd.Context(), app.OpenOptions{MustExist: !f.follow})
			if err != nil {
				return err
			}
			defer a.Close()
			if f.typ != "" && !a.Registry.Known(f.typ) {
				return unknownType(f.typ, a.Registry.Types())
			}
			return printEvents(cmd.Context(), cmd.OutOrStdout(), a.Store, f)
		},
	}
	cmd.Flags().StringVar(&f.stream, "stream", "", "only this stream")
	cmd.Flags().StringVar(&f.typ, "type", "", "only events of this type")
	cmd.Flags().Int64Var(&f.after, "after", 0, "start after this global position (or stream version with --stream)")
	cmd.Flags().IntVar(&f.limit, "limit", 0, "print at most this many events (0: all)")
	cmd.Flags().BoolVar(&f.follow, "follow", false, "keep printing new events as they are committed")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "one JSON object per line")
	return cmd
}

// unknownType refuses a --type no event has, naming the types it may
// have meant (or all of them): a misspelt type would print nothing.
func unknownType(typ string, types []string) error {
	slices.Sort(types)
	var near []string
	for _, t := range types {
		if strings.Contains(strings.ToLower(t), strings.ToLower(typ)) {
			near = append(near, t)
		}
	}
	if len(near) > 0 {
		return fmt.Errorf("no event type %q; did you mean %s?", typ, strings.Join(near, ", "))
	}
	return fmt.Errorf("no event type %q; the types are %s", typ, strings.Join(types, ", "))
}

func printEvents(ctx context.Context, w io.Writer, s eventstore.Store, f eventsFilter) error {
	p := &eventPrinter{w: w, f: f}
	switch {
	case f.follow:
		return p.follow(ctx, s)
	case f.stream != "":
		evs, err := s.Load(ctx, f.stream, f.after+1)
		if err != nil {
			return err
		}
		_, err = p.print(evs)
		return err
	default:
		return p.all(ctx, s)
	}
}

// eventPrinter writes the events that pass the filter, up to its limit.
type eventPrinter struct {
	w       io.Writer
	f       eventsFilter
	printed int
}

// print reports whether the limit was reached.
func (p *eventPrinter) print(evs []domain.Event) (bool, error) {
	for _, e := range evs {
		if (p.f.typ != "" && e.Type != p.f.typ) || (p.f.stream != "" && e.StreamID != p.f.stream) {
			continue
		}
		if err := writeEvent(p.w, e, p.f.asJSON); err != nil {
			return false, err
		}
		p.printed++
		if p.f.limit > 0 && p.printed >= p.f.limit {
			return true, nil
		}
	}
	return false, nil
}

// all prints the log from f.after to its current end.
func (p *eventPrinter) all(ctx context.Context, s eventstore.Store) error {
	after := p.f.after
	for {
		evs, err := s.ReadAll(ctx, after, 1000)
		if err != nil {
			return err
		}
		done, err := p.print(evs)
		if err != nil || done || len(evs) < 1000 {
			return err
		}
		after = evs[len(evs)-1].Position
	}
}

// follow prints committed events as they come until the limit or Ctrl-C.
func (p *eventPrinter) follow(ctx context.Context, s eventstore.Store) error {
	err := eventstore.Follow(ctx, s, p.f.after, eventstore.FollowOptions{}, func(_ context.Context, evs []domain.Event) (int64, error) {
		done, err := p.print(evs)
		if err != nil {
			return 0, err
		}
		if done {
			return 0, errLimitReached
		}
		return evs[len(evs)-1].Position, nil
	})
	if errors.Is(err, errLimitReached) || ctx.Err() != nil {
		return nil //nolint:nilerr // the limit or Ctrl-C ends the listing normally
	}
	return err
}

var errLimitReached = fmt.Errorf("limit reached")

type jsonEvent struct {
	Position   int64           `json:"position"`
	Stream     string          `json:"stream"`
	Version    int64           `json:"version"`
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Data       json.RawMessage `json:"data"`
	Metadata   domain.Metadata `json:"metadata"`
	RecordedAt string          `json:"recorded_at"`
}

func writeEvent(w io.Writer, e domain.Event, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(jsonEvent{e.Position, e.StreamID, e.Version, e.ID.String(), e.Type, e.Data, e.Metadata, e.RecordedAt.UTC().Format("2006-01-02T15:04:05.000000Z07:00")})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	data := strings.ReplaceAll(string(e.Data), "\n", " ")
	if len(data) > 160 {
		data = data[:157] + "..."
	}
	_, err := fmt.Fprintf(w, "%8d  %s  %s@%d  %s  %s\n", e.Position, e.RecordedAt.Local().Format("2006-01-02 15:04:05.000"), e.StreamID, e.Version, e.Type, data)
	return err
}
