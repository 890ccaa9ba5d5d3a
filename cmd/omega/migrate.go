package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/migrations"
)

func migrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending schema migrations (serve also does this at start)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := cli.Open(cmd.Context(), app.OpenOptions{})
			if err != nil {
				return err
			}
			defer a.Close()
			return printSchema(cmd, a)
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "Print the schema version without changing anything",
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := cli.Open(cmd.Context(), app.OpenOptions{SkipMigrate: true, MustExist: true})
			if errors.Is(err, app.ErrNoData) {
				// Nothing to read the version from: the schema is not there.
				cfg, cerr := config.Load()
				if cerr != nil {
					return cerr
				}
				d := migrations.SQLite
				if cfg.DatabaseURL != "" {
					d = migrations.Postgres
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: no omega schema yet, version 0 (this omega knows up to %d); omega migrate or omega serve creates it\n",
					app.WhereOf(cfg), migrations.Newest(d))
				return nil
			}
			if err != nil {
				return err
			}
			defer a.Close()
			return printSchema(cmd, a)
		},
	})
	return cmd
}

func printSchema(cmd *cobra.Command, a *app.App) error {
	current, latest, err := a.MigrationStatus(cmd.Context())
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: schema version %d (this omega knows up to %d)\n", a.Where(), current, latest)
	return nil
}
