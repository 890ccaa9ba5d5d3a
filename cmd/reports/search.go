package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/omega-gateway/omega/domain/sender"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/projections/recall"
)

func searchCmd() *cobra.Command {
	var who string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search TEXT",
		Short: "Search every conversation's messages and summaries (full text, best match first)",
		Long: "Searches the full-text index of every message (the person's and omega's replies) and every\n" +
			"conversation summary, best match first. Words of three letters or more are looked for, common\n" +
			"words left out, each by its first five letters (so \"adopting\" finds \"adopt\"). --sender limits\n" +
			"it to that person's own conversations.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := recall.Query{Text: strings.Join(args, " "), Limit: limit}
			if len(recall.Terms(q.Text)) == 0 {
				return fmt.Errorf("nothing to search for in %q: give words of three letters or more, not only common ones", q.Text)
			}
			if limit < 1 || limit > 1000 {
				return errors.New("--limit must be between 1 and 1000")
			}
			if who != "" {
				ref, err := identity.ParseIdentity(who)
				if err != nil {
					return fmt.Errorf("--sender: %w", err)
				}
				q.Chat = ref.Key()
			}
			a, err := cli.OpenCaughtUp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			hits, err := a.Recall.Search(cmd.Context(), q)
			if err != nil {
				return err
			}
			if asJSON {
				return writeHitsJSON(cmd.OutOrStdout(), hits)
			}
			if len(hits) == 0 {
				cmd.PrintErrln("no passage matches")
				return nil
			}
			return writeHits(cmd.OutOrStdout(), hits)
		},
	}
	cmd.Flags().StringVar(&who, "sender", "", "only this person's conversations, CHANNEL:ID")
	cmd.Flags().IntVar(&limit, "limit", recall.DefaultLimit, "at most this many passages")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the passages as JSON")
	return cmd
}

// writeHits prints each passage under a line naming when, whose, who said
// it and the turn to open with omega timeline.
func writeHits(w io.Writer, hits []recall.Hit) error {
	for _, h := range hits {
		where := "turn " + h.TurnID
		if h.TurnID == "" {
			where = "conversation " + h.ConversationID
		}
		if _, err := fmt.Fprintf(w, "%s  %s  %s  %s\n  %s\n", h.At.Format("2006-01-02 15:04"), sender.SenderLabel(h.Chat), h.Kind, where,
			strings.Join(strings.Fields(h.Text), " ")); err != nil {
			return err
		}
	}
	return nil
}

type hitJSON struct {
	At           string  `json:"at"`
	Chat         string  `json:"chat"`
	Conversation string  `json:"conversation"`
	Turn         string  `json:"turn,omitempty"`
	Project      string  `json:"project,omitempty"`
	Kind         string  `json:"kind"`
	Text         string  `json:"text"`
	Score        float64 `json:"score"`
}

func writeHitsJSON(w io.Writer, hits []recall.Hit) error {
	out := make([]hitJSON, len(hits))
	for i, h := range hits {
		out[i] = hitJSON{At: h.At.Format("2006-01-02T15:04:05Z07:00"), Chat: sender.SenderLabel(h.Chat), Conversation: h.ConversationID, Turn: h.TurnID,
			Project: h.Project, Kind: h.Kind, Text: h.Text, Score: h.Score}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
