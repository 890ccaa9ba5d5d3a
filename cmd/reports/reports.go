// Package reports holds the operator's read-only commands over the event
// log and its read models: `omega events`, `omega timeline`, `omega audit`,
// `omega bugs` and `omega state`. None of them records anything.
package reports

import "github.com/spf13/cobra"

// Commands are the report commands, for the root command to add.
func Commands() []*cobra.Command {
	return []*cobra.Command{eventsCmd(), timelineCmd(), auditCmd(), bugsCmd(), stateCmd(), searchCmd(), usageCmd()}
}
