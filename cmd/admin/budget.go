package admin

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/sender"
	budgethandler "github.com/omega-gateway/omega/handlers/budget"
)

func budgetCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "budget", Short: "Set and show the spending limits on provider calls"}
	cmd.AddCommand(budgetSetCmd(), budgetShowCmd())
	return cmd
}

func budgetSetCmd() *cobra.Command {
	var who, daily, monthly string
	cmd := &cobra.Command{
		Use:   "set --sender CHANNEL:ID [--daily AMOUNT] [--monthly AMOUNT]",
		Short: "Limit one sender's spending per day and per month (records BudgetSet); an amount is 20000tok, 1.50usd or both, none removes it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ref, err := identity.ParseIdentity(who)
			if err != nil {
				return fmt.Errorf("--sender: %w", err)
			}
			if !cmd.Flags().Changed("daily") && !cmd.Flags().Changed("monthly") {
				return fmt.Errorf("give --daily, --monthly or both")
			}
			set := &budgethandler.SetBudget{Channel: ref.Channel, SenderID: ref.ID, Meta: domain.Metadata{CorrelationID: "cli"}}
			if set.Daily, err = amountFlag(cmd, "daily", daily); err != nil {
				return err
			}
			if set.Monthly, err = amountFlag(cmd, "monthly", monthly); err != nil {
				return err
			}
			if err := cli.Send(cmd, set); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: daily %s, monthly %s\n", ref.Channel+":"+ref.ID, given(set.Daily), given(set.Monthly))
			return nil
		},
	}
	cmd.Flags().StringVar(&who, "sender", "", "the sender, CHANNEL:ID")
	cmd.Flags().StringVar(&daily, "daily", "", "the most per day: 20000tok, 1.50usd, both (20000tok,1.50usd) or none")
	cmd.Flags().StringVar(&monthly, "monthly", "", "the most per month, as --daily")
	_ = cmd.MarkFlagRequired("sender")
	return cmd
}

func budgetShowCmd() *cobra.Command {
	var who string
	cmd := &cobra.Command{
		Use:   "show [--sender CHANNEL:ID]",
		Short: "Show what was spent this day and month, the limits and when they reset",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var senders []string
			if who != "" {
				ref, err := identity.ParseIdentity(who)
				if err != nil {
					return fmt.Errorf("--sender: %w", err)
				}
				senders = append(senders, sender.SenderKey(ref.Channel, ref.ID))
			}
			a, err := cli.OpenCaughtUp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			lines, err := showLines(cmd, a, senders...)
			if err != nil {
				return err
			}
			return writeLines(cmd.OutOrStdout(), lines)
		},
	}
	cmd.Flags().StringVar(&who, "sender", "", "only everything together and this sender, CHANNEL:ID")
	return cmd
}

// amountFlag reads a limit flag: nil when it was not given, zero for none.
func amountFlag(cmd *cobra.Command, name, v string) (*budget.Amount, error) {
	if !cmd.Flags().Changed(name) {
		return nil, nil
	}
	if v == "none" {
		return &budget.Amount{}, nil
	}
	a, err := budget.ParseAmount(v)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", name, err)
	}
	return &a, nil
}

// given words a limit set (or left as it was).
func given(a *budget.Amount) string {
	if a == nil {
		return "unchanged"
	}
	return orNone(*a)
}

func orNone(a budget.Amount) string {
	if a.IsZero() {
		return "none"
	}
	return a.String()
}

// showLines is the guard's status for the senders (every sender with
// limits when none is given).
func showLines(cmd *cobra.Command, a interface {
	NewBudgetGuard(*time.Location, budgethandler.Owner) (*budgethandler.Guard, error)
}, senders ...string) ([]budget.Line, error) {
	g, err := a.NewBudgetGuard(nil, nil)
	if err != nil {
		return nil, err
	}
	return g.Status(cmd.Context(), senders...)
}

func writeLines(w io.Writer, lines []budget.Line) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tPERIOD\tSPENT TOKENS\tSPENT USD\tCALLS\tLIMIT\tLEFT\tRESETS")
	for _, l := range lines {
		scope := sender.SenderLabel(l.Scope)
		if scope == "" {
			scope = "everything"
		}
		left := "-"
		if !l.Limit.IsZero() {
			left = l.Left().String()
			if left == "" {
				left = "0"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.4f\t%d\t%s\t%s\t%s\n", scope, l.Period, l.Spent.Tokens, l.Spent.USD, l.Spent.Calls,
			orNone(l.Limit), left, l.ResetAt.Format(time.RFC3339))
	}
	return tw.Flush()
}
