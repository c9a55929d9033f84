package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// A command is one of herald's commands, as help lists it.
type command struct {
	name, args, summary string
	// flags returns the command's flags, their defaults read through
	// getenv; nil for a command without flags.
	flags func(getenv func(string) string) *flag.FlagSet
}

// commands are herald's commands, in the order help lists them.
var commands = []command{
	{"serve", "[flags]", "runs the server; the command when none is named", serveFlags},
	{"keys list", "[-db path]", "lists the API keys: id, environment, last four, source, when created and revoked", keysFlagsOf("list")},
	{"keys create", "-env Development|Production [-db path]", "creates an API key and prints it, once", keysFlagsOf("create")},
	{"keys revoke", "<id or last four> [-db path]", "revokes an API key; a running server refuses it within a fraction of a second", keysFlagsOf("revoke")},
	{"users list", "[-db path]", "lists the console's team: id, email, name, role, password and when added", usersFlagsOf("list")},
	{"users create", "-email E -name N -role viewer|editor|admin [-password-stdin] [-db path]", "adds a member and prints a one-time password, or takes their password from stdin", usersFlagsOf("create")},
	{"users set-role", "<id or email> -role viewer|editor|admin [-db path]", "changes a member's role; it applies at their next request", usersFlagsOf("set-role")},
	{"users reset-password", "<id or email> [-password-stdin] [-db path]", "prints a new one-time password (or takes one from stdin) and signs the member out", usersFlagsOf("reset-password")},
	{"users remove", "<id or email> [-db path]", "removes a member; their sessions end at once", usersFlagsOf("remove")},
	{"backup", "[-db path] FILE", "writes a consistent copy of the SQLite database to FILE, while the server runs or not; PostgreSQL is backed up with pg_dump", backupFlags("backup")},
	{"restore", "[-db path] FILE", "puts the backup FILE in place of the SQLite database, keeping the one it replaces; refused while a server runs on it", backupFlags("restore")},
	{"healthcheck", "[-addr host:port]", "exits 0 if the server on this machine answers GET /healthz, for a container's health check", healthcheckFlags},
	{"version", "", "prints the version, the commit and the Go version that built it", nil},
	{"help", "[command]", "prints this, or the help of one command (herald help keys revoke)", nil},
}

// serveFlags are `herald serve`'s flags: each setting, its default read
// through getenv.
func serveFlags(getenv func(string) string) *flag.FlagSet {
	cfg, _ := parseConfig(nil, getenv)
	return cfg.flags
}

// runCommand runs the command args name when it is not serve (keys,
// version, help, or -h for the whole help); done is false for serve,
// which run runs itself.
func runCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) (done bool, err error) {
	if len(args) == 0 {
		return false, nil
	}
	if isHelpFlag(args[0]) || args[0] == "help" && (len(args) == 1 || isHelpFlag(args[1])) {
		return true, help(stdout, nil)
	}
	switch args[0] {
	case "help":
		return true, help(stdout, args[1:])
	case "version":
		if len(args) > 1 && isHelpFlag(args[1]) {
			return true, help(stdout, args[:1])
		}
		fmt.Fprintln(stdout, platform.BuildInfo())
		return true, nil
	case "keys", "users", "backup", "restore":
		getenv, err := withConfigFile(getenv)
		if err != nil {
			return true, err
		}
		return true, runDBCommand(ctx, args, getenv, stdin, stdout)
	case "healthcheck":
		return true, runHealthcheck(ctx, args[1:], getenv, stdout)
	case "serve":
		return false, nil
	}
	if !strings.HasPrefix(args[0], "-") {
		return true, fmt.Errorf("unknown command %q; `herald help` lists the commands", args[0])
	}
	return false, nil
}

// runDBCommand runs a command that works on the server's database.
func runDBCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	switch args[0] {
	case "keys":
		return runKeys(ctx, args[1:], getenv, stdout)
	case "users":
		return runUsers(ctx, args[1:], getenv, stdin, stdout)
	case "backup":
		return runBackup(ctx, args[1:], getenv, stdout)
	default:
		return runRestore(ctx, args[1:], getenv, stdout)
	}
}

func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// help prints the commands whose names start with the words of topic
// (every command for none), each with its flags and their built-in
// defaults.
func help(w io.Writer, topic []string) error {
	prefix := strings.Join(topic, " ")
	var shown []command
	for _, c := range commands {
		if prefix == "" || c.name == prefix || strings.HasPrefix(c.name, prefix+" ") {
			shown = append(shown, c)
		}
	}
	if len(shown) == 0 {
		return fmt.Errorf("no command %q; `herald help` lists the commands", prefix)
	}
	if prefix == "" {
		fmt.Fprint(w, "Herald, a self-hosted notification service (README.md).\n\n")
	}
	fmt.Fprintln(w, "usage:")
	for _, c := range shown {
		fmt.Fprintf(w, "  %s\n      %s\n", usage(c.name), c.summary)
	}
	noEnv, noted := func(string) string { return "" }, false
	for _, c := range shown {
		if c.flags == nil {
			continue
		}
		if !noted {
			noted = true
			fmt.Fprint(w, "\nFlags go before or after a command's arguments. Each flag of serve falls\nback to its HERALD_* variable; a flag given wins.\n")
		}
		fmt.Fprintf(w, "\nherald %s flags:\n", c.name)
		fs := c.flags(noEnv)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	return nil
}

// usage is how a command is written: herald, its name and its arguments.
func usage(name string) string {
	for _, c := range commands {
		if c.name == name {
			return strings.TrimSpace("herald " + c.name + " " + c.args)
		}
	}
	return "herald " + name
}

// parseFlags parses args with fs, flags before or after the arguments
// (`herald keys revoke 3f9a -db x.db`), and returns the arguments; after
// "--" everything is an argument.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if read := len(args) - len(rest); read > 0 && args[read-1] == "--" {
			return append(positional, rest...), nil
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
}

// quietFlagSet is a flag set that prints nothing: its errors are returned,
// and help prints the usage.
func quietFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// keysOptions are the flags of `herald keys`.
type keysOptions struct {
	db  string
	env string // create only
}

// keysFlags are the flags of `herald keys sub`.
func keysFlags(sub string, getenv func(string) string) (*flag.FlagSet, *keysOptions) {
	o := &keysOptions{}
	fs := quietFlagSet("herald keys " + sub)
	fs.StringVar(&o.db, "db", cmp.Or(getenv("HERALD_DB"), "herald.db"), "the server's database: its SQLite file or a postgres:// URL (HERALD_DB)")
	if sub == "create" {
		fs.StringVar(&o.env, "env", "", "the new key's environment: Development or Production")
	}
	return fs, o
}

// keysFlagsOf is keysFlags for help, which needs only the flag set.
func keysFlagsOf(sub string) func(getenv func(string) string) *flag.FlagSet {
	return func(getenv func(string) string) *flag.FlagSet {
		fs, _ := keysFlags(sub, getenv)
		return fs
	}
}

// A keysCommand is a subcommand of `herald keys`: how many arguments it
// takes, and what it does on the open database.
type keysCommand struct {
	args int
	run  func(ctx context.Context, db *sqldb.DB, o *keysOptions, args []string, getenv func(string) string, stdout io.Writer) error
}

var keysCommands = map[string]keysCommand{
	"list":   {0, listKeys},
	"create": {0, createKey},
	"revoke": {1, revokeKey},
}

// runKeys is `herald keys`: list, create and revoke API keys in the
// database named by -db or HERALD_DB, while the server runs or not.
func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	var o *keysOptions
	sub, positional, done, err := parseSubcommand("keys", "list, create or revoke", args, stdout, func(sub string) *flag.FlagSet {
		if _, ok := keysCommands[sub]; !ok {
			return nil
		}
		fs, opts := keysFlags(sub, getenv)
		o = opts
		return fs
	})
	if done || err != nil {
		return err
	}
	cmd := keysCommands[sub]
	switch {
	case len(positional) != cmd.args:
		return fmt.Errorf("usage: %s", usage("keys "+sub))
	case sub == "create" && o.env == "":
		return errors.New("herald keys create needs -env Development or -env Production")
	}
	db, err := openServerDB(ctx, o.db)
	if err != nil {
		return err
	}
	defer db.Close()
	return cmd.run(ctx, db, o, positional, getenv, stdout)
}

// parseSubcommand reads `herald group sub …`: the subcommand's name, and
// its arguments once flags (its flag set, nil for a name not among names)
// has parsed them. done is true when help was asked for, and printed.
func parseSubcommand(group, names string, args []string, stdout io.Writer, flags func(sub string) *flag.FlagSet) (sub string, positional []string, done bool, err error) {
	if len(args) == 0 {
		return "", nil, false, fmt.Errorf("herald %s needs %s; `herald help %s` tells more", group, names, group)
	}
	if isHelpFlag(args[0]) {
		return "", nil, true, help(stdout, []string{group})
	}
	sub = args[0]
	fs := flags(sub)
	if fs == nil {
		return sub, nil, false, fmt.Errorf("unknown %s command %q: use %s; `herald help %s` tells more", group, sub, names, group)
	}
	positional, err = parseFlags(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return sub, nil, true, help(stdout, []string{group, sub})
	}
	if err != nil {
		return sub, nil, false, fmt.Errorf("herald %s %s: %w; `herald help %s %s` lists its flags", group, sub, err, group, sub)
	}
	return sub, positional, false, nil
}

// openServerDB opens the server's database for a command (keys, users),
// whether or not the server runs, and migrates it: an installation
// upgraded while stopped may not have the columns the command reads yet,
// and migrating is what the server's next start would do first.
func openServerDB(ctx context.Context, path string) (*sqldb.DB, error) {
	if err := checkServerDB(path); err != nil {
		return nil, err
	}
	db, err := sqldb.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := sqldb.Migrate(db, migrations.FS); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkServerDB refuses a SQLite file that does not exist: keys and users
// work on the server's database, and opening a mistyped path would create
// a new one.
func checkServerDB(path string) error {
	if sqldb.IsPostgresURL(path) || path == sqldb.MemoryPath {
		return nil
	}
	if _, err := os.Stat(sqlitePath(path)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no database at %s: -db or HERALD_DB names the server's database, which its first start creates", path)
	}
	return nil
}

func listKeys(ctx context.Context, db *sqldb.DB, _ *keysOptions, _ []string, _ func(string) string, stdout io.Writer) error {
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
}

func createKey(ctx context.Context, db *sqldb.DB, o *keysOptions, _ []string, getenv func(string) string, stdout io.Writer) error {
	// The key is sealed with the server's secret too, so the inbox can
	// check a subscriberHash made with it.
	secret, err := platform.LoadSecret(ctx, db, getenv("HERALD_SECRET"), nil)
	if err != nil {
		return err
	}
	key, k, err := platform.CreateAPIKey(ctx, db, o.env, secret, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Created %s API key %s (it is shown only this once):\n%s\n", k.Environment, k.ID, key)
	return nil
}

func revokeKey(ctx context.Context, db *sqldb.DB, _ *keysOptions, args []string, _ func(string) string, stdout io.Writer) error {
	k, err := platform.RevokeAPIKey(ctx, db, args[0], time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Revoked %s API key %s (…%s)\n", k.Environment, k.ID, k.LastFour)
	return nil
}
