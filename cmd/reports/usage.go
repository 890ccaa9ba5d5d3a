package reports

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/api/audit"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/projections/providercalls"
)

func usageCmd() *cobra.Command {
	var by, since, until, who, purpose string
	cmd := &cobra.Command{
		Use:   "usage [--by day|sender|purpose|model]",
		Short: "Where the tokens went: every provider call summed by day, sender, purpose or model",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := audit.ParseFilter(func(name string) string {
				return map[string]string{"since": since, "until": until}[name]
			}, time.Now())
			if err != nil {
				return err
			}
			var key string
			if who != "" {
				ref, err := identity.ParseIdentity(who)
				if err != nil {
					return fmt.Errorf("--sender: %w", err)
				}
				key = sender.SenderKey(ref.Channel, ref.ID)
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
			calls, err := a.Calls.Calls(cmd.Context(), f.Since, f.Until, purpose, key)
			if err != nil {
				return err
			}
			totals, err := providercalls.Group(calls, by, loc)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "%s\tCALLS\tFAILED\tTOKENS\tCOST USD\n", map[string]string{"day": "DAY", "sender": "SENDER", "purpose": "PURPOSE", "model": "MODEL"}[by])
			var all providercalls.Total
			for _, t := range totals {
				group := t.Group
				if by == providercalls.BySender {
					group = sender.SenderLabel(group)
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.4f\n", group, t.Calls, t.Failed, t.Tokens, t.USD)
				all.Calls, all.Failed, all.Tokens, all.USD = all.Calls+t.Calls, all.Failed+t.Failed, all.Tokens+t.Tokens, all.USD+t.USD
			}
			fmt.Fprintf(tw, "all\t%d\t%d\t%d\t%.4f\n", all.Calls, all.Failed, all.Tokens, all.USD)
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&by, "by", providercalls.ByPurpose, "group by day (in OMEGA_TIMEZONE), sender, purpose or model")
	cmd.Flags().StringVar(&since, "since", "", "from this time: RFC 3339 or a duration back from now (24h)")
	cmd.Flags().StringVar(&until, "until", "", "before this time: RFC 3339 or a duration back from now")
	cmd.Flags().StringVar(&who, "sender", "", "only this sender's calls, CHANNEL:ID")
	cmd.Flags().StringVar(&purpose, "purpose", "", "only calls for this purpose (turn, plan_step, classifier, heartbeat, summary, facts, self_heal)")
	return cmd
}
