package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
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
			a, err := openApp(cmd.Context(), app.OpenOptions{})
			if err != nil {
				return err
			}
			defer a.Close()
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

func printEvents(ctx context.Context, w io.Writer, s eventstore.Store, f eventsFilter) error {
	printed := 0
	print := func(evs []domain.Event) (bool, error) {
		for _, e := range evs {
			if f.typ != "" && e.Type != f.typ {
				continue
			}
			if f.stream != "" && e.StreamID != f.stream {
				continue
			}
			if err := writeEvent(w, e, f.asJSON); err != nil {
				return false, err
			}
			printed++
			if f.limit > 0 && printed >= f.limit {
				return true, nil
			}
		}
		return false, nil
	}
	if f.stream != "" && !f.follow {
		evs, err := s.Load(ctx, f.stream, f.after+1)
		if err != nil {
			return err
		}
		_, err = print(evs)
		return err
	}
	if !f.follow {
		after := f.after
		for {
			evs, err := s.ReadAll(ctx, after, 1000)
			if err != nil {
				return err
			}
			done, err := print(evs)
			if err != nil || done || len(evs) < 1000 {
				return err
			}
			after = evs[len(evs)-1].Position
		}
	}
	err := eventstore.Follow(ctx, s, f.after, eventstore.FollowOptions{}, func(_ context.Context, evs []domain.Event) (int64, error) {
		done, err := print(evs)
		if err != nil {
			return 0, err
		}
		if done {
			return 0, errLimitReached
		}
		return evs[len(evs)-1].Position, nil
	})
	if err == errLimitReached || ctx.Err() != nil {
		return nil
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
