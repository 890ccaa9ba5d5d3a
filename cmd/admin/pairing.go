package admin

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/handlers/access"
	"github.com/spf13/cobra"
)

// pairingCmd is sender pairing on the command line: list the requests of
// unknown senders and approve, reject or revoke them (each decision an
// event, through the command bus). Not `omega whatsapp pair`, which links
// omega's own WhatsApp account.
func pairingCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "pairing", Short: "Let unknown senders in: list, approve, reject and revoke pairing codes"}
	var all bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List pending pairing requests (--all: every request) and the approved senders",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, done, err := openAccess(cmd)
			if err != nil {
				return err
			}
			defer done()
			reqs, approved, err := svc.Requests(cmd.Context(), !all)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CODE\tSENDER\tNAME\tSTATE\tREQUESTED\tEXPIRES")
			now := time.Now()
			for _, r := range reqs {
				fmt.Fprintf(tw, "%s\t%s:%s\t%s\t%s\t%s\t%s\n", r.Code, r.Channel, r.SenderID, r.SenderName, r.State(now),
					r.RequestedAt.Local().Format(time.DateTime), r.ExpiresAt.Local().Format(time.DateTime))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, s := range approved {
				fmt.Fprintln(cmd.OutOrStdout(), "approved:", s)
			}
			return nil
		},
	}
	list.Flags().BoolVar(&all, "all", false, "include decided and expired requests")
	cmd.AddCommand(list,
		&cobra.Command{
			Use: "approve CODE", Short: "Approve a pairing code (records PairingApproved; the sender is told by the running serve)",
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return cli.Send(cmd, &access.ApprovePairing{Code: args[0], By: "cli"})
			},
		},
		&cobra.Command{
			Use: "reject CODE", Short: "Reject a pairing code (records PairingRejected)",
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return cli.Send(cmd, &access.RejectPairing{Code: args[0], By: "cli"})
			},
		},
		&cobra.Command{
			Use: "revoke CHANNEL:SENDER", Short: "Revoke an approved sender (records PairingRevoked)",
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				who, err := identity.ParseIdentity(args[0])
				if err != nil {
					return identityArgs(args, "CHANNEL:SENDER")
				}
				return cli.Send(cmd, &access.RevokePairing{Channel: who.Channel, SenderID: who.ID, By: "cli"})
			},
		})
	return cmd
}

// identityCmd links one person's identities across channels, as /link
// does in chat.
func identityCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "identity", Short: "Link one person's identities across channels (shared facts, language, projects)"}
	cmd.AddCommand(
		&cobra.Command{
			Use: "list", Short: "List linked identities (alias → canonical)", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				svc, done, err := openAccess(cmd)
				if err != nil {
					return err
				}
				defer done()
				links, err := svc.Links(cmd.Context())
				for _, l := range links {
					fmt.Fprintln(cmd.OutOrStdout(), l)
				}
				return err
			},
		},
		&cobra.Command{
			Use: "link CANONICAL ALIAS", Short: "ALIAS (channel:id) shares CANONICAL's profile (records IdentityLinked)",
			Args: cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := identityArgs(args, "CANONICAL", "ALIAS"); err != nil {
					return err
				}
				return cli.Send(cmd, &access.LinkIdentities{Canonical: args[0], Alias: args[1], By: "cli"})
			},
		},
		&cobra.Command{
			Use: "unlink CHANNEL:ID", Short: "Give an identity its own profile back (records IdentityUnlinked)",
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := identityArgs(args, "CHANNEL:ID"); err != nil {
					return err
				}
				return cli.Send(cmd, &access.UnlinkIdentity{Identity: args[0], By: "cli"})
			},
		})
	return cmd
}

// identityArgs refuses, before anything is sent, an argument that is not
// channel:id, naming it.
func identityArgs(args []string, names ...string) error {
	for i, name := range names {
		if _, err := identity.ParseIdentity(args[i]); err != nil {
			return fmt.Errorf("%s must be channel:id, such as telegram:1001 (got %q)", name, args[i])
		}
	}
	return nil
}

// openAccess opens the store for reading pairings and identity links;
// done closes it. Where omega has never run it refuses, creating nothing.
func openAccess(cmd *cobra.Command) (*access.Service, func(), error) {
	a, err := cli.Open(cmd.Context(), app.OpenOptions{MustExist: true})
	if err != nil {
		return nil, nil, err
	}
	svc, err := a.Access()
	if err != nil {
		_ = a.Close()
		return nil, nil, err
	}
	return svc, func() { _ = a.Close() }, nil
}
