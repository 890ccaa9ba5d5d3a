// Package admin holds the commands that change omega's state from the
// terminal: facts, tasks, sender pairing, identity links and the
// heartbeat checklist. Each change is a command on the bus or a decision
// recorded as events, never a write to a read model.
package admin

import "github.com/spf13/cobra"

// Commands are the admin commands, for the root command to add.
func Commands() []*cobra.Command {
	return []*cobra.Command{factsCmd(), tasksCmd(), pairingCmd(), identityCmd(), heartbeatCmd(), budgetCmd()}
}
