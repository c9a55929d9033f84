package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
)

// apiCall sends one API request with key and returns the status and body.
func apiCall(t *testing.T, method, url, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "ApiKey "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// herald runs one of herald's commands and returns its output.
func herald(env map[string]string, args ...string) (string, error) {
	var stdout bytes.Buffer
	err := run(context.Background(), append([]string{"herald"}, args...), func(k string) string { return env[k] }, nil, &stdout, &bytes.Buffer{})
	return stdout.String(), err
}

const backupTestKey = "dev-key-for-the-backup-test-000000000"

// TestBackup_UnderLoadThenRestore backs a server's database up while
// triggers keep arriving: the copy is whole and holds every notification
// answered before the backup began; restored into a new path, it is
// served by a server started on it.
func TestBackup_UnderLoadThenRestore(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	env := map[string]string{
		"HERALD_DB":      filepath.Join(dir, "herald.db"),
		"HERALD_API_KEY": backupTestKey,
		"HERALD_SECRET":  "a-secret-of-at-least-thirty-two-bytes",
	}
	base, _, stop := startRun(t, env)
	status, _ := apiCall(t, "POST", base+"/v2/workflows", backupTestKey, `{"name":"Kept","workflowId":"kept","active":true,
		"steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"Hi"}}]}`)
	is.Equal(status, 201) // the workflow is created

	// Four clients trigger until told to stop, each noting the
	// transactionIds answered and when.
	type answer struct {
		id string
		at time.Time
	}
	var (
		mu       sync.Mutex
		answered []answer
		failed   []string
		wg       sync.WaitGroup
	)
	quit := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-quit:
					return
				default:
				}
				status, body := apiCall(t, "POST", base+"/v1/events/trigger", backupTestKey, `{"name":"kept","to":"ada"}`)
				at := time.Now()
				var ack struct {
					TransactionID string `json:"transactionId"`
				}
				json.Unmarshal(body, &ack)
				mu.Lock()
				if status == 201 && ack.TransactionID != "" {
					answered = append(answered, answer{ack.TransactionID, at})
				} else {
					failed = append(failed, string(body))
				}
				mu.Unlock()
			}
		})
	}
	answeredBefore := func(n int) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(answered) >= n
	}
	for deadline := time.Now().Add(60 * time.Second); !answeredBefore(20) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	is.True(answeredBefore(20)) // the load is running

	backup := filepath.Join(dir, "backup.db")
	began := time.Now()
	out, err := herald(env, "backup", backup)
	is.NoErr(err)                               // backed up while triggers are accepted
	is.True(strings.Contains(out, "Backed up")) // and says so
	close(quit)
	wg.Wait()
	is.Equal(len(failed), 0) // no trigger failed while the backup ran

	var before []string
	for _, a := range answered {
		if a.at.Before(began) {
			before = append(before, a.id)
		}
	}
	is.True(len(before) >= 20) // the answers the copy must hold

	copyDB, err := sql.Open("sqlite", "file:"+backup+"?mode=ro")
	is.NoErr(err)
	defer copyDB.Close()
	var check string
	is.NoErr(copyDB.QueryRow(`PRAGMA integrity_check`).Scan(&check))
	is.Equal(check, "ok") // the copy is whole
	held := map[string]bool{}
	rows, err := copyDB.Query(`SELECT transaction_id FROM notifications`)
	is.NoErr(err)
	for rows.Next() {
		var id string
		is.NoErr(rows.Scan(&id))
		held[id] = true
	}
	is.NoErr(rows.Err())
	for _, id := range before {
		is.True(held[id]) // every notification answered before the backup began is in it
	}

	// Restored into a fresh path, a server on it serves them.
	is.NoErr(stop())
	restoredEnv := map[string]string{"HERALD_DB": filepath.Join(dir, "restored", "herald.db"),
		"HERALD_API_KEY": backupTestKey, "HERALD_SECRET": env["HERALD_SECRET"]}
	is.NoErr(os.Mkdir(filepath.Dir(restoredEnv["HERALD_DB"]), 0o700))
	out, err = herald(restoredEnv, "restore", backup)
	is.NoErr(err)                              // restored
	is.True(strings.Contains(out, "Restored")) // and says so
	is.True(!strings.Contains(out, "kept as")) // nothing was replaced
	base, _, _ = startRun(t, restoredEnv)
	for _, id := range []string{before[0], before[len(before)-1]} {
		status, body := apiCall(t, "GET", base+"/v1/notifications?transactionId="+id, backupTestKey, "")
		is.Equal(status, 200) // the activity feed answers
		var page struct {
			Data []struct {
				TransactionID string `json:"transactionId"`
			} `json:"data"`
		}
		is.NoErr(json.Unmarshal(body, &page))
		is.Equal(len(page.Data), 1)              // the notification is served from the restored database
		is.Equal(page.Data[0].TransactionID, id) // the one asked for
	}
}

func TestRestore_RefusedWhileServing(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	env := map[string]string{"HERALD_DB": filepath.Join(dir, "herald.db")}
	startRun(t, env)
	backup := filepath.Join(dir, "backup.db")
	_, err := herald(env, "backup", backup)
	is.NoErr(err) // a backup needs no lock

	_, err = herald(env, "restore", backup)
	is.True(errors.Is(err, sqldb.ErrServerRunning))   // refused while the server runs
	is.True(strings.Contains(err.Error(), "stop it")) // saying what to do
	err = runRefused(t, env)
	is.True(errors.Is(err, sqldb.ErrServerRunning)) // so is a second server on the same file
}

func TestBackup_Errors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"ErrNoFile", []string{"backup", "-db", filepath.Join(dir, "x.db")}, "usage: herald backup"},
		{"ErrMissingDatabase", []string{"backup", "-db", filepath.Join(dir, "x.db"), filepath.Join(dir, "b.db")}, "no database at"},
		{"ErrMemory", []string{"backup", "-db", ":memory:", "b.db"}, "one process"},
		{"ErrPostgres", []string{"backup", "-db", "postgres://h/db", "b.db"}, "pg_dump"},
		{"ErrRestorePostgres", []string{"restore", "-db", "postgres://h/db", "b.db"}, "pg_restore"},
		{"ErrRestoreMissingBackup", []string{"restore", "-db", filepath.Join(dir, "x.db"), filepath.Join(dir, "none.db")}, "none.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := herald(map[string]string{}, tc.args...)
			is.True(err != nil)                             // refused
			is.True(strings.Contains(err.Error(), tc.want)) // saying why
		})
	}
}

func TestBackup_Scheduled(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	backups := filepath.Join(dir, "backups")
	is.NoErr(os.Mkdir(backups, 0o700))
	other := filepath.Join(backups, "notes.txt")
	is.NoErr(os.WriteFile(other, []byte("kept"), 0o600))
	env := map[string]string{"HERALD_DB": filepath.Join(dir, "herald.db"), "HERALD_BACKUP_DIR": backups, "HERALD_BACKUP_KEEP": "2"}
	_, stderr, stop := startRun(t, env, "-backup-every", "20ms")

	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(stderr.String(), "backup written") < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	is.NoErr(stop())
	is.True(strings.Count(stderr.String(), "backup written") >= 4) // backups are taken on schedule
	names, err := filepath.Glob(filepath.Join(backups, "herald-*.db"))
	is.NoErr(err)
	is.Equal(len(names), 2) // only the newest two are kept
	for _, name := range names {
		is.NoErr(sqldb.CheckBackup(context.Background(), name)) // each whole
	}
	_, err = os.Stat(other)
	is.NoErr(err) // a file that is not a backup is left alone
}

func TestBackup_BadSettings(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"ErrMissingDir", map[string]string{"HERALD_BACKUP_DIR": filepath.Join(dir, "none")}, "HERALD_BACKUP_DIR"},
		{"ErrKeepZero", map[string]string{"HERALD_BACKUP_KEEP": "0"}, "HERALD_BACKUP_KEEP"},
		{"ErrKeepText", map[string]string{"HERALD_BACKUP_KEEP": "many"}, "HERALD_BACKUP_KEEP"},
		{"ErrEvery", map[string]string{"HERALD_BACKUP_EVERY": "daily"}, "HERALD_BACKUP_EVERY"},
		{"ErrEveryZero", map[string]string{"HERALD_BACKUP_EVERY": "0s"}, "HERALD_BACKUP_EVERY"},
		{"ErrPostgres", map[string]string{"HERALD_BACKUP_DIR": dir, "HERALD_DB": "postgres://h/db"}, "pg_dump"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := parseConfig(nil, func(k string) string { return tc.env[k] })
			is.True(err != nil)                             // the start is refused
			is.True(strings.Contains(err.Error(), tc.want)) // naming the setting
		})
	}
}

func TestHealthcheck(t *testing.T) {
	is := is.New(t)
	env := map[string]string{"HERALD_DB": ":memory:"}
	startRun(t, env)
	out, err := herald(env, "healthcheck")
	is.NoErr(err)         // the server answers, through HERALD_ADDR
	is.Equal(out, "ok\n") // and says so
	_, err = herald(map[string]string{}, "healthcheck", "-addr", freeAddr(t), "-timeout", "2s")
	is.True(err != nil) // nothing listening fails
	_, err = herald(map[string]string{}, "healthcheck", "-addr", "nonsense")
	is.True(err != nil && strings.Contains(err.Error(), "host:port")) // an address that is not one is refused
}
