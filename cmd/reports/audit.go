package reports

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/api/audit"
	"github.com/omega-gateway/omega/cmd/cli"
)

var auditHelp = map[string]string{
	"sender":  "only this sender, CHANNEL:ID",
	"channel": "only this channel",
	"since":   "from this time: RFC 3339 or a duration back from now (24h)",
	"until":   "before this time: RFC 3339 or a duration back from now",
	"status":  "answered, denied, failed, suppressed or acknowledged",
	"model":   "only turns answered by this model",
	"project": "only turns in this project",
	"grep":    "only turns whose message or reply contains this text (any case)",
	"limit":   "rows per page (default 50, at most 1000)",
	"after":   "the cursor the previous page printed, for the next page",
}

func auditCmd() *cobra.Command {
	params := map[string]*string{}
	var format, by string
	var stats bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Query the audit of completed turns (filters, pages, --stats)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := audit.ParseFilter(func(name string) string { return *params[name] }, time.Now())
			if err != nil {
				return err
			}
			if err := audit.CheckAnswer(format, by); err != nil {
				return err
			}
			a, err := cli.OpenCaughtUp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			log := a.Audit
			out := cmd.OutOrStdout()
			if stats {
				s, err := log.Stats(cmd.Context(), f, by)
				if err != nil {
					return err
				}
				return audit.WriteStats(out, format, s)
			}
			page, err := log.Query(cmd.Context(), f)
			if err != nil {
				return err
			}
			if err := audit.WriteRows(out, format, page.Rows); err != nil {
				return err
			}
			if page.Next != "" {
				// stderr, so JSON and CSV on stdout stay one document.
				cmd.PrintErrf("more: --after %s\n", page.Next)
			}
			return nil
		},
	}
	for _, name := range audit.Params {
		params[name] = cmd.Flags().String(name, "", auditHelp[name])
	}
	cmd.Flags().StringVar(&format, "format", audit.Table, "table, json or csv")
	cmd.Flags().BoolVar(&stats, "stats", false, "totals instead of rows: turns, denials, failures, latency p50/p95, provider time, tokens, cost")
	cmd.Flags().StringVar(&by, "by", "", "with --stats: group by day, sender, model or purpose (every provider call: turn, plan_step, classifier, heartbeat, summary, facts, self_heal, build)")
	return cmd
}
