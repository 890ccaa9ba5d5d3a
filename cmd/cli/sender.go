package cli

import (
	"fmt"

	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/spf13/cobra"
)

// SenderArgs reads a command's leading sender, CHANNEL:ID, followed by
// rest more arguments. The older two-word form (CHANNEL ID) is still
// accepted, with a note on stderr, so that scripts keep working.
func SenderArgs(cmd *cobra.Command, args []string, rest int) (sender.SenderRef, []string, error) {
	switch len(args) {
	case rest + 1:
		who, err := identity.ParseIdentity(args[0])
		return who, args[1:], err
	case rest + 2:
		cmd.PrintErrf("note: %q %q is the old form; write %s:%s\n", args[0], args[1], args[0], args[1])
		return sender.SenderRef{Channel: args[0], ID: args[1]}, args[2:], nil
	}
	return sender.SenderRef{}, nil, fmt.Errorf("want CHANNEL:ID and %d more argument(s), got %d argument(s)", rest, len(args))
}

// SenderThen accepts a sender and rest more arguments, in either form.
func SenderThen(rest int) cobra.PositionalArgs { return cobra.RangeArgs(rest+1, rest+2) }
