package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/herald-notify/herald/platform"
)

// usersOptions are the flags of `herald users`.
type usersOptions struct {
	db            string
	email, name   string // create
	role          string // create, set-role
	passwordStdin bool   // create, reset-password
}

// usersFlags are the flags of `herald users sub`.
func usersFlags(sub string, getenv func(string) string) (*flag.FlagSet, *usersOptions) {
	o := &usersOptions{}
	fs := quietFlagSet("herald users " + sub)
	fs.StringVar(&o.db, "db", cmp.Or(getenv("HERALD_DB"), "herald.db"), "the server's database: its SQLite file or a postgres:// URL (HERALD_DB)")
	if sub == "create" {
		fs.StringVar(&o.email, "email", "", "the member's email, which they sign in with")
		fs.StringVar(&o.name, "name", "", "the member's name")
	}
	if sub == "create" || sub == "set-role" {
		fs.StringVar(&o.role, "role", "", "viewer, editor or admin (docs/console.md, \"Roles\")")
	}
	if sub == "create" || sub == "reset-password" {
		fs.BoolVar(&o.passwordStdin, "password-stdin", false, "read the password from the first line of stdin instead of printing a one-time one")
	}
	return fs, o
}

// usersFlagsOf is usersFlags for help, which needs only the flag set.
func usersFlagsOf(sub string) func(getenv func(string) string) *flag.FlagSet {
	return func(getenv func(string) string) *flag.FlagSet {
		fs, _ := usersFlags(sub, getenv)
		return fs
	}
}

// A usersCommand is a subcommand of `herald users`: how many arguments it
// takes, and what it does to the team.
type usersCommand struct {
	args int
	run  func(ctx context.Context, a *platform.Accounts, org string, o *usersOptions, args []string, stdin io.Reader, stdout io.Writer) error
}

var usersCommands = map[string]usersCommand{
	"list":           {0, listUsers},
	"create":         {0, createUser},
	"set-role":       {1, setUserRole},
	"reset-password": {1, resetUserPassword},
	"remove":         {1, removeUser},
}

// runUsers is `herald users`: the console's team, in the database named by
// -db or HERALD_DB, while the server runs or not (docs/console.md,
// "herald users").
func runUsers(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	var o *usersOptions
	sub, positional, done, err := parseSubcommand("users", "list, create, set-role, reset-password or remove", args, stdout,
		func(sub string) *flag.FlagSet {
			if _, ok := usersCommands[sub]; !ok {
				return nil
			}
			fs, opts := usersFlags(sub, getenv)
			o = opts
			return fs
		})
	if done || err != nil {
		return err
	}
	cmd := usersCommands[sub]
	if len(positional) != cmd.args {
		return fmt.Errorf("usage: %s", usage("users "+sub))
	}
	db, err := openServerDB(ctx, o.db)
	if err != nil {
		return err
	}
	defer db.Close()
	accounts := platform.NewAccounts(db, nil)
	org, err := accounts.Organization(ctx)
	if err != nil {
		return err
	}
	return cmd.run(ctx, accounts, org, o, positional, stdin, stdout)
}

func listUsers(ctx context.Context, a *platform.Accounts, org string, _ *usersOptions, _ []string, _ io.Reader, stdout io.Writer) error {
	users, err := a.Users(ctx, org)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tEMAIL\tNAME\tROLE\tPASSWORD\tADDED")
	for _, u := range users {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", u.ID, u.Email, u.Name, u.Role, passwordState(u), u.CreatedAt)
	}
	return w.Flush()
}

// passwordState says whether a member can sign in, and with what.
func passwordState(u platform.ConsoleUser) string {
	switch {
	case !u.HasPassword:
		return "awaits setup link"
	case u.MustChangePassword:
		return "one-time"
	}
	return "set"
}

func createUser(ctx context.Context, a *platform.Accounts, org string, o *usersOptions, _ []string, stdin io.Reader, stdout io.Writer) error {
	role, ok := platform.ParseRole(o.role)
	if !ok {
		return fmt.Errorf("herald users create needs -role viewer, -role editor or -role admin")
	}
	pw, oneTime, err := passwordFor(o, stdin)
	if err != nil {
		return err
	}
	u, err := a.Create(ctx, org, platform.NewConsoleUser{Email: o.email, Name: o.name, Role: role, Password: pw, OneTime: oneTime})
	if err != nil {
		return problemText(err)
	}
	fmt.Fprintf(stdout, "Added %s (%s) as %s, id %s.\n", u.Email, u.Name, u.Role, u.ID)
	if oneTime {
		fmt.Fprintf(stdout, "One-time password (it is shown only this once; they choose their own at the first sign-in):\n%s\n", pw)
	}
	return nil
}

func setUserRole(ctx context.Context, a *platform.Accounts, org string, o *usersOptions, args []string, _ io.Reader, stdout io.Writer) error {
	role, ok := platform.ParseRole(o.role)
	if !ok {
		return fmt.Errorf("herald users set-role needs -role viewer, -role editor or -role admin")
	}
	u, err := a.SetRole(ctx, org, args[0], role)
	if err != nil {
		return problemText(err)
	}
	fmt.Fprintf(stdout, "%s is now %s.\n", u.Email, u.Role)
	return nil
}

func resetUserPassword(ctx context.Context, a *platform.Accounts, org string, o *usersOptions, args []string, stdin io.Reader, stdout io.Writer) error {
	u, err := a.User(ctx, org, args[0])
	if err != nil {
		return problemText(err)
	}
	pw, oneTime, err := passwordFor(o, stdin)
	if err != nil {
		return err
	}
	if err := a.SetPassword(ctx, org, u.ID, pw, oneTime); err != nil {
		return problemText(err)
	}
	fmt.Fprintf(stdout, "New password for %s; their sessions are signed out.\n", u.Email)
	if oneTime {
		fmt.Fprintf(stdout, "One-time password (it is shown only this once):\n%s\n", pw)
	}
	return nil
}

func removeUser(ctx context.Context, a *platform.Accounts, org string, _ *usersOptions, args []string, _ io.Reader, stdout io.Writer) error {
	u, err := a.Remove(ctx, org, args[0])
	if err != nil {
		return problemText(err)
	}
	fmt.Fprintf(stdout, "Removed %s; their sessions are signed out.\n", u.Email)
	return nil
}

// passwordFor is the password a command sets: the first line of stdin
// with -password-stdin, else a generated one-time one.
func passwordFor(o *usersOptions, stdin io.Reader) (pw string, oneTime bool, err error) {
	if !o.passwordStdin {
		return platform.GeneratePassword(), true, nil
	}
	if stdin == nil {
		return "", false, errors.New("-password-stdin: nothing to read")
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", false, fmt.Errorf("-password-stdin: %w", err)
	}
	pw = strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", false, errors.New("-password-stdin: stdin held no password")
	}
	return pw, false, nil
}

// problemText is err as a command says it: a 422's fields each with their
// problem, so a script's author sees which flag to fix.
func problemText(err error) error {
	var e *platform.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		if errors.As(err, &e) {
			return errors.New(e.Message)
		}
		return err
	}
	var parts []string
	for field, f := range e.Fields {
		parts = append(parts, "-"+field+" "+strings.Join(f.Messages, ", "))
	}
	return errors.New(strings.Join(parts, "; "))
}
