package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/handlers/asof"
)

func stateCmd() *cobra.Command {
	var snd, at string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "state --sender CHANNEL:ID [--at TIME|TURN_ID]",
		Short: "Show what omega knew about a sender at a moment, folded from the log",
		Long: `state prints what omega knew about a sender at a moment: facts, language,
personality, active project, provider session, pending tasks with their next
due times, heartbeat checklist and the open conversation, all folded from the
event log as it stood then. --at takes RFC 3339 (2026-11-20T14:00:00Z), a
wall-clock time in the owner's time zone (OMEGA_TIMEZONE): "2026-11-20 14:00",
or a turn id (or the 8 characters omega audit prints): the state that turn
built its context from. Default: now.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			who, err := identity.ParseIdentity(snd)
			if err != nil {
				return fmt.Errorf("--sender: %w", err)
			}
			a, err := cli.OpenCaughtUp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			loc, err := a.Config.Location()
			if err != nil {
				return err
			}
			states, err := a.States()
			if err != nil {
				return err
			}
			moment := asof.Moment{At: time.Now()}
			if at != "" {
				if moment, err = momentOf(cmd, a, states, at, loc); err != nil {
					return err
				}
			}
			st, err := states.At(cmd.Context(), who, moment)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			printState(cmd.OutOrStdout(), st, loc)
			return nil
		},
	}
	cmd.Flags().StringVar(&snd, "sender", "", "the sender, CHANNEL:ID (e.g. telegram:12345)")
	cmd.Flags().StringVar(&at, "at", "", `the moment: RFC 3339, "2026-11-20 14:00" in the owner's time zone, or a turn id (default: now)`)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("sender")
	return cmd
}

// momentOf reads --at: a time, else a turn's id or the start of a
// completed turn's id (omega audit prints 8 characters).
func momentOf(cmd *cobra.Command, a *app.App, states *asof.Reader, at string, loc *time.Location) (asof.Moment, error) {
	if t, ok := asof.ParseTime(at, loc); ok {
		return asof.Moment{At: t}, nil
	}
	id := strings.TrimSpace(at)
	if ids, err := a.Audit.TurnsWithPrefix(cmd.Context(), id, 2); err == nil && len(ids) == 1 {
		id = ids[0]
	}
	m, err := states.TurnMoment(cmd.Context(), id)
	if err != nil {
		return m, fmt.Errorf(`--at %q is neither a time (RFC 3339, or "2006-01-02 15:04" in %s) nor a turn: %w`, at, loc, err)
	}
	return m, nil
}

const stateTime = "2006-01-02 15:04:05 MST"

func printState(w io.Writer, st asof.State, loc *time.Location) {
	fmt.Fprintf(w, "%s as of %s", st.Sender, st.At.In(loc).Format(stateTime))
	if st.Profile != st.Sender {
		fmt.Fprintf(w, " (uses the profile of %s)", st.Profile)
	}
	fmt.Fprintln(w)
	if !st.Known {
		fmt.Fprintln(w, "No profile recorded yet: omega had not greeted this sender.")
	}
	fmt.Fprintf(w, "Name:         %s\n", or(st.Name, "-"))
	fmt.Fprintf(w, "Language:     %s\n", or(st.Language, "not chosen (each message's own)"))
	fmt.Fprintf(w, "Personality:  %s\n", or(st.Personality, "default"))
	fmt.Fprintf(w, "Project:      %s\n", or(st.Project, "none"))
	fmt.Fprintf(w, "Session:      %s\n", or(st.Session, "none"))
	fmt.Fprintf(w, "Facts (%d):\n", len(st.Facts))
	for _, f := range st.Facts {
		fmt.Fprintf(w, "  %s: %s\n", f[0], f[1])
	}
	fmt.Fprintf(w, "Tasks (%d):\n", len(st.Tasks))
	for _, t := range st.Tasks {
		fmt.Fprintf(w, "  %s  due %s  %s %s  %s\n", shortID(t.ID), t.Due.In(loc).Format("2006-01-02 15:04 MST"), t.Repeat, t.Kind, t.Description)
	}
	printChecklists(w, st.Heartbeat)
	printConversation(w, st, loc)
}

func printChecklists(w io.Writer, lists []asof.Checklist) {
	fmt.Fprintln(w, "Heartbeat checklist:")
	for _, c := range lists {
		every := "default interval"
		if c.Interval > 0 {
			every = fmt.Sprintf("every %d min", c.Interval)
		}
		fmt.Fprintf(w, "  %s (%s, %d items)\n", c.Scope, every, len(c.Items))
		for _, it := range c.Items {
			fmt.Fprintf(w, "    - %s\n", it)
		}
		if len(c.Suppressed) > 0 {
			fmt.Fprintf(w, "    suppressed: %s\n", strings.Join(c.Suppressed, ", "))
		}
	}
}

func printConversation(w io.Writer, st asof.State, loc *time.Location) {
	c := st.Conversation
	if c == nil {
		fmt.Fprintln(w, "Conversation: none (a message then started a new one)")
		return
	}
	how := "idle: a message then started a new one"
	switch {
	case c.Closed:
		how = "closed: a message then started a new one"
	case st.Next.ConversationID == c.ID && st.Next.Session != "":
		how = "open: a message then continued it, resuming session " + st.Next.Session
	case st.Next.ConversationID == c.ID:
		how = "open: a message then continued it"
	}
	fmt.Fprintf(w, "Conversation: %s, last message %s (%s)\n", c.ID, c.LastAt.In(loc).Format(stateTime), how)
	for _, m := range c.Messages {
		fmt.Fprintf(w, "  [%s %s] %s\n", m.Role, m.At.In(loc).Format("15:04:05"), oneLine(m.Text, 100))
	}
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
