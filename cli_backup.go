package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// backupFlags are the flags of `herald backup` and `herald restore`: the
// database, as serve names it.
func backupFlags(name string) func(getenv func(string) string) *flag.FlagSet {
	return func(getenv func(string) string) *flag.FlagSet {
		fs, _ := backupFlagSet(name, getenv)
		return fs
	}
}

func backupFlagSet(name string, getenv func(string) string) (*flag.FlagSet, *string) {
	fs := quietFlagSet("herald " + name)
	db := fs.String("db", cmp.Or(getenv("HERALD_DB"), "herald.db"), "the server's SQLite database file (HERALD_DB)")
	return fs, db
}

// parseBackupArgs reads `herald backup|restore [-db D] FILE`; done is true
// when help was asked for, and printed.
func parseBackupArgs(name string, args []string, getenv func(string) string, stdout io.Writer) (db, file string, done bool, err error) {
	fs, dbFlag := backupFlagSet(name, getenv)
	positional, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return "", "", true, help(stdout, []string{name})
	}
	if err != nil {
		return "", "", false, fmt.Errorf("herald %s: %w; `herald help %s` lists its flags", name, err, name)
	}
	if len(positional) != 1 {
		return "", "", false, fmt.Errorf("usage: %s", usage(name))
	}
	if *dbFlag == sqldb.MemoryPath {
		return "", "", false, fmt.Errorf("herald %s: -db %s is a database of one process, which no other command can reach", name, sqldb.MemoryPath)
	}
	return *dbFlag, positional[0], false, nil
}

// runBackup is `herald backup`: a consistent copy of the server's SQLite
// database, written while it runs (docs/install.md, "Backups").
func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	path, file, done, err := parseBackupArgs("backup", args, getenv, stdout)
	if done || err != nil {
		return err
	}
	if sqldb.IsPostgresURL(path) {
		return sqldb.ErrBackupPostgres
	}
	if err := checkServerDB(path); err != nil {
		return err
	}
	// Not openServerDB: a backup copies the database as it is, and
	// migrating belongs to the server's start.
	db, err := sqldb.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Backup(ctx, file); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Backed up %s to %s\n", path, file)
	return nil
}

// runRestore is `herald restore`: the backup FILE in place of the server's
// SQLite database, while no server runs on it.
func runRestore(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	path, file, done, err := parseBackupArgs("restore", args, getenv, stdout)
	if done || err != nil {
		return err
	}
	if sqldb.IsPostgresURL(path) {
		return errors.New("the database is PostgreSQL: restore a pg_dump backup with pg_restore (docs/install.md, \"Backups\")")
	}
	if err := checkDBDir(path); err != nil {
		return err
	}
	replaced, err := sqldb.Restore(ctx, file, path)
	if errors.Is(err, sqldb.ErrServerRunning) {
		return fmt.Errorf("%w: stop it, then restore", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Restored %s from %s\n", path, file)
	if replaced != "" {
		fmt.Fprintf(stdout, "The database it replaced is kept as %s\n", replaced)
	}
	return nil
}

// backupSettings are serve's scheduled backups: every interval, a copy of
// the SQLite database into dir, keeping the newest keep.
type backupSettings struct {
	dir   string
	every time.Duration
	keep  int
}

// backupSettingFlags declares the scheduled backups' settings on fs, each
// falling back to its HERALD_* variable through env.
func backupSettingFlags(fs *flag.FlagSet, b *backupSettings, env func(name, def string) string) error {
	fs.StringVar(&b.dir, "backup-dir", env("HERALD_BACKUP_DIR", ""), "a directory for scheduled backups of the SQLite database; unset, none are taken (HERALD_BACKUP_DIR)")
	every, err := time.ParseDuration(env("HERALD_BACKUP_EVERY", "24h"))
	if err != nil {
		return fmt.Errorf("HERALD_BACKUP_EVERY: want a duration above 0, such as 6h")
	}
	fs.DurationVar(&b.every, "backup-every", every, "how often a scheduled backup is taken (HERALD_BACKUP_EVERY)")
	keep, err := strconv.Atoi(env("HERALD_BACKUP_KEEP", "7"))
	if err != nil {
		return fmt.Errorf("HERALD_BACKUP_KEEP: want a whole number of backups, 1 or more")
	}
	fs.IntVar(&b.keep, "backup-keep", keep, "how many scheduled backups are kept; older ones are removed (HERALD_BACKUP_KEEP)")
	return nil
}

// check refuses settings no schedule can follow.
func (b backupSettings) check(db string) error {
	if b.every <= 0 {
		return fmt.Errorf("-backup-every (HERALD_BACKUP_EVERY) %s: want a duration above 0, such as 6h", b.every)
	}
	if b.keep < 1 {
		return fmt.Errorf("-backup-keep (HERALD_BACKUP_KEEP) %d: want 1 or more", b.keep)
	}
	if b.dir == "" {
		return nil
	}
	if sqldb.IsPostgresURL(db) {
		return errors.New("-backup-dir (HERALD_BACKUP_DIR) backs up SQLite only: back PostgreSQL up with pg_dump (docs/install.md, \"Backups\")")
	}
	if info, err := os.Stat(b.dir); err != nil || !info.IsDir() {
		return fmt.Errorf("-backup-dir (HERALD_BACKUP_DIR) %q is not a directory; create it first", b.dir)
	}
	return nil
}

// Scheduled backups are named by their time, so that names sort as times
// do and pruning keeps the newest.
const (
	backupPrefix = "herald-"
	backupSuffix = ".db"
	backupStamp  = "20060102T150405.000Z"
)

// startBackups takes a backup of db into b.dir every b.every, keeping the
// newest b.keep, until ctx is done; the returned func waits for a backup
// under way. A failed backup is logged and tried again at the next tick:
// the server serves on.
func startBackups(ctx context.Context, db *sqldb.DB, b backupSettings, now func() time.Time, logger *slog.Logger) (wait func()) {
	if b.dir == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(b.every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			start := now()
			file := filepath.Join(b.dir, backupPrefix+start.UTC().Format(backupStamp)+backupSuffix)
			if err := db.Backup(ctx, file); err != nil {
				if ctx.Err() == nil {
					logger.Error("scheduled backup failed", "file", file, "err", err)
				}
				continue
			}
			removed, err := pruneBackups(b.dir, b.keep)
			if err != nil {
				logger.Warn("removing old backups", "dir", b.dir, "err", err)
			}
			logger.Info("backup written", "file", file, "duration", now().Sub(start).String(), "removed", removed)
		}
	})
	logger.Info("scheduled backups", "dir", b.dir, "every", b.every.String(), "keep", b.keep)
	return wg.Wait
}

// pruneBackups removes all but the newest keep scheduled backups in dir,
// touching no other file, and reports how many it removed.
func pruneBackups(dir string, keep int) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var names []string
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), backupPrefix)
		stamp, ok2 := strings.CutSuffix(stamp, backupSuffix)
		if _, err := time.Parse(backupStamp, stamp); ok && ok2 && err == nil && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	removed := 0
	for len(names) > keep {
		if err := os.Remove(filepath.Join(dir, names[0])); err != nil {
			return removed, err
		}
		names, removed = names[1:], removed+1
	}
	return removed, nil
}
