package admin

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain"
	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/handlers/heartbeat"
	"github.com/spf13/cobra"
)

// heartbeatCmd manages checklists by recording events; HEARTBEAT.md files
// are an import and an export, the log is the master copy.
func heartbeatCmd() *cobra.Command {
	var project string
	cmd := &cobra.Command{Use: "heartbeat", Short: "Show and change the heartbeat checklist (global, or --project)"}
	cmd.PersistentFlags().StringVar(&project, "project", "", "the project's checklist instead of the global one")
	scope := func() string { return cmp.Or(project, heartbeatdom.GlobalHeartbeat) }
	var configured time.Duration // OMEGA_HEARTBEAT_INTERVAL, for show
	run := func(fn func(*cobra.Command, heartbeat.Checklists, []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			a, err := cli.Open(cmd.Context(), app.OpenOptions{})
			if err != nil {
				return err
			}
			defer a.Close()
			configured = a.Config.HeartbeatInterval
			return fn(cmd, heartbeat.Checklists{Store: a.Store, Registry: a.Registry}, args)
		}
	}
	show := &cobra.Command{Use: "show", Short: "Print the checklist, interval and suppressed sections", Args: cobra.NoArgs,
		RunE: run(func(cmd *cobra.Command, c heartbeat.Checklists, _ []string) error {
			hb, err := c.Load(cmd.Context(), scope())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			interval := configured.String() + ", OMEGA_HEARTBEAT_INTERVAL"
			if hb.Interval > 0 {
				interval = strconv.Itoa(hb.Interval) + " min"
			}
			fmt.Fprintf(out, "checklist %s (interval: %s)\n", scope(), interval)
			if len(hb.Suppressed) > 0 {
				fmt.Fprintf(out, "suppressed sections: %s\n", strings.Join(hb.Suppressed, ", "))
			}
			if len(hb.Items) == 0 {
				fmt.Fprintln(out, "The checklist is empty: no check-ins run. Add an item with: omega heartbeat add ITEM")
			}
			fmt.Fprint(out, hb.Export())
			return nil
		})}
	add := &cobra.Command{Use: "add ITEM", Short: "Add an item (a duplicate, in any case, is ignored)", Args: cobra.MinimumNArgs(1),
		RunE: run(func(cmd *cobra.Command, c heartbeat.Checklists, args []string) error {
			item := strings.Join(args, " ")
			_, err := c.Decide(cmd.Context(), scope(), "cli/heartbeat/add", func(hb heartbeatdom.Heartbeat) ([]domain.Payload, error) {
				return hb.Add(item), nil
			})
			return err
		})}
	rm := &cobra.Command{Use: "rm KEYWORD", Short: "Remove every item containing KEYWORD (any case)", Args: cobra.MinimumNArgs(1),
		RunE: run(func(cmd *cobra.Command, c heartbeat.Checklists, args []string) error {
			keyword := strings.Join(args, " ")
			removed := 0
			_, err := c.Decide(cmd.Context(), scope(), "cli/heartbeat/rm", func(hb heartbeatdom.Heartbeat) ([]domain.Payload, error) {
				ps := hb.Remove(keyword)
				for _, p := range ps {
					removed += len(p.(heartbeatdom.HeartbeatItemRemoved).Removed)
				}
				return ps, nil
			})
			if err == nil && removed == 0 {
				return fmt.Errorf("no item contains %q", keyword)
			}
			return err
		})}
	interval := &cobra.Command{Use: "interval MINUTES", Short: "Set the interval, 1 to 1440 minutes", Args: cobra.ExactArgs(1),
		RunE: run(func(cmd *cobra.Command, c heartbeat.Checklists, args []string) error {
			m, err := strconv.Atoi(args[0])
			if err != nil {
				return fmt.Errorf("interval %q: want minutes", args[0])
			}
			_, err = c.Decide(cmd.Context(), scope(), "cli/heartbeat/interval", func(hb heartbeatdom.Heartbeat) ([]domain.Payload, error) {
				return hb.SetInterval(m, heartbeatdom.IntervalByCLI)
			})
			return err
		})}
	export := &cobra.Command{Use: "export [FILE]", Short: "Write the checklist as a HEARTBEAT.md (stdout without FILE)", Args: cobra.MaximumNArgs(1),
		RunE: run(func(cmd *cobra.Command, c heartbeat.Checklists, args []string) error {
			hb, err := c.Load(cmd.Context(), scope())
			if err != nil {
				return err
			}
			if len(args) == 0 {
				fmt.Fprint(cmd.OutOrStdout(), hb.Export())
				return nil
			}
			return os.WriteFile(args[0], []byte(hb.Export()), 0o600)
		})}
	imp := &cobra.Command{Use: "import FILE", Short: "Add a HEARTBEAT.md's items (duplicates ignored, any case)", Args: cobra.ExactArgs(1),
		RunE: run(func(cmd *cobra.Command, c heartbeat.Checklists, args []string) error {
			path, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			if _, err := os.Stat(path); err != nil {
				return err
			}
			n, err := c.ImportFile(cmd.Context(), scope(), path)
			if err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "imported %d new items into %s\n", n, scope())
			}
			return err
		})}
	cmd.AddCommand(show, add, rm, interval, export, imp)
	return cmd
}
