// Package reports holds the operator's read-only commands over the event
// log and its read models: `omega events`, `omega timeline`, `omega audit`
// and `omega bugs`. None of them records anything.
package reports

import "github.com/spf13/cobra"

// Commands are the report commands, for the root command to add.
func Commands() []*cobra.Command {
	return []*cobra.Command{eventsCmd(), timelineCmd(), auditCmd(), bugsCmd(), usageCmd()}
}
