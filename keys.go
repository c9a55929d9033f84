package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

const keysUsage = `usage:
  herald keys list [-db path]
  herald keys create [-db path] -env Development|Production
  herald keys revoke [-db path] <id or last four>

keys works on the database while the server runs; a running server refuses
a revoked key within a fraction of a second (docs/security.md).`

// runKeys is `herald keys`: list, create and revoke API keys in the database
// named by -db or HERALD_DB.
func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(keysUsage)
	}
	command := args[0]
	fs := flag.NewFlagSet("herald keys "+command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dbPath := fs.String("db", getenv("HERALD_DB"), "database file (HERALD_DB)")
	env := fs.String("env", "", "the environment of the new key: Development or Production")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w\n%s", err, keysUsage)
	}
	if *dbPath == "" {
		*dbPath = "herald.db"
	}
	run := map[string]func(*sqldb.DB) error{
		"list": func(db *sqldb.DB) error {
			keys, err := platform.ListAPIKeys(ctx, db)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tENVIRONMENT\tKEY\tSOURCE\tCREATED\tREVOKED")
			for _, k := range keys {
				fmt.Fprintf(w, "%s\t%s\t…%s\t%s\t%s\t%s\n", k.ID, k.Environment, k.LastFour, k.Source, k.CreatedAt, k.RevokedAt)
			}
			return w.Flush()
		},
		"create": func(db *sqldb.DB) error {
			if *env == "" {
				return errors.New("herald keys create needs -env Development or -env Production")
			}
			// The key is sealed with the server's secret too, so the inbox
			// can check a subscriberHash made with it.
			secret, err := platform.LoadSecret(ctx, db, getenv("HERALD_SECRET"), nil)
			if err != nil {
				return err
			}
			key, k, err := platform.CreateAPIKey(ctx, db, *env, secret, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Created %s API key %s (it is shown only this once):\n%s\n", k.Environment, k.ID, key)
			return nil
		},
		"revoke": func(db *sqldb.DB) error {
			if fs.NArg() != 1 {
				return errors.New("herald keys revoke needs one key id or last four characters")
			}
			k, err := platform.RevokeAPIKey(ctx, db, fs.Arg(0), time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Revoked %s API key %s (…%s)\n", k.Environment, k.ID, k.LastFour)
			return nil
		},
	}[command]
	if run == nil {
		return fmt.Errorf("unknown keys command %q\n%s", command, keysUsage)
	}
	if command != "revoke" && fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q\n%s", fs.Arg(0), keysUsage)
	}
	db, err := sqldb.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	// An installation upgraded while stopped may not have the key columns
	// yet; migrating is what the server's next start would do first.
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		return err
	}
	return run(db)
}
