package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/projections"
	"github.com/spf13/cobra"
)

func tasksCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tasks", Short: "List and cancel scheduled reminders and actions"}
	var asJSON, all bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List tasks (pending and failed; --all adds done and cancelled)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withTasks(cmd, func(a *app.App, read *projections.Queries) error {
				tasks, err := read.AllTasks(cmd.Context(), all)
				if err != nil {
					return err
				}
				if asJSON {
					return printTasksJSON(cmd, tasks)
				}
				loc, err := a.Config.Location()
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSENDER\tDUE\tREPEAT\tKIND\tSTATUS\tDESCRIPTION")
				for _, t := range tasks {
					status := t.Status
					if t.LastError != "" {
						status += " (" + t.LastError + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ShortID(), sender.SenderLabel(t.Sender), t.Due.In(loc).Format("2006-01-02 15:04 MST"),
						t.Repeat, t.Kind, status, t.Description)
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.Flags().BoolVar(&all, "all", false, "include done and cancelled tasks")
	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a pending task by id or unique id prefix (records TaskCancelled)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withTasks(cmd, func(a *app.App, read *projections.Queries) error {
				return cancelTask(cmd, a, read, args[0], asJSON)
			})
		},
	}
	cancel.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list, cancel)
	return cmd
}

// cancelTask sends CancelTask for the one pending task whose id starts
// with prefix and reports it once an omega process has handled it.
func cancelTask(cmd *cobra.Command, a *app.App, read *projections.Queries, prefix string, asJSON bool) error {
	tasks, err := read.AllTasks(cmd.Context(), false)
	if err != nil {
		return err
	}
	var match []projections.TaskRow
	for _, t := range tasks {
		if t.Status == task.TaskStatusPending && strings.HasPrefix(t.ID, strings.ToLower(prefix)) {
			match = append(match, t)
		}
	}
	switch len(match) {
	case 0:
		return fmt.Errorf("no pending task matches %s", prefix)
	case 1:
	default:
		return fmt.Errorf("%s matches %d pending tasks: give more of the id", prefix, len(match))
	}
	tk := match[0]
	err = cli.Do(cmd.Context(), a, &effects.CancelTask{TaskID: tk.ID, Reason: "cli",
		Meta: domain.Metadata{CorrelationID: "cli", CausationID: "cli/cancel/" + tk.ID}})
	var failed *messaging.CommandError
	if errors.As(err, &failed) && strings.Contains(failed.Reason, task.ErrTaskNotPending.Error()) {
		return fmt.Errorf("task %s is no longer pending", tk.ShortID())
	}
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]string{"id": tk.ID, "status": task.TaskStatusCancelled})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "cancelled %s: %s\n", tk.ShortID(), tk.Description)
	return nil
}

// withTasks opens the app with the tasks read model caught up.
func withTasks(cmd *cobra.Command, fn func(*app.App, *projections.Queries) error) error {
	a, err := cli.OpenCaughtUp(cmd)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a, a.Queries)
}

type taskJSON struct {
	ID          string    `json:"id"`
	Sender      string    `json:"sender"`
	Description string    `json:"description"`
	Due         time.Time `json:"due"`
	Repeat      string    `json:"repeat"`
	Kind        string    `json:"kind"`
	Project     string    `json:"project,omitempty"`
	Status      string    `json:"status"`
	Fired       int       `json:"fired"`
	LastError   string    `json:"last_error,omitempty"`
}

func printTasksJSON(cmd *cobra.Command, tasks []projections.TaskRow) error {
	out := make([]taskJSON, len(tasks))
	for i, t := range tasks {
		out[i] = taskJSON{ID: t.ID, Sender: sender.SenderLabel(t.Sender), Description: t.Description, Due: t.Due, Repeat: t.Repeat, Kind: t.Kind,
			Project: t.Project, Status: t.Status, Fired: t.Fired, LastError: t.LastError}
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
