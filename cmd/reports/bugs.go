package reports

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/cmd/cli"
	agentreports "github.com/omega-gateway/omega/projections/reports"
)

// bugsCmd lists what the agent reported about itself: BUG_REPORT and
// LIMITATION markers, newest first.
func bugsCmd() *cobra.Command {
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "bugs",
		Short: "List the agent's bug reports and limitations, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := cli.OpenCaughtUp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			reports, err := a.Reports.List(cmd.Context(), limit)
			if err != nil {
				return err
			}
			if asJSON {
				return printReportsJSON(cmd, reports)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tKIND\tSENDER\tTEXT")
			for _, r := range reports {
				text := r.Text
				if r.Title != "" {
					text = r.Title + ": " + text
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.At.Format(time.RFC3339), r.Kind, r.Sender, strings.ReplaceAll(text, "\n", " / "))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many reports")
	return cmd
}

func printReportsJSON(cmd *cobra.Command, reports []agentreports.Report) error {
	if reports == nil {
		reports = []agentreports.Report{}
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(reports)
}
