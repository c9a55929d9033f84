package sqldb

import (
	"errors"
	"fmt"
	"os"
)

// ErrServerRunning is what LockServer returns while another process holds
// the database's lock.
var ErrServerRunning = errors.New("a Herald server is running on this database")

// LockServer takes the lock that says a server runs on the SQLite database
// at path: an exclusive lock on the file path-lock beside it, held until
// unlock is called or the process ends, however it ends, since the
// operating system releases it then. `herald serve` holds it while it
// runs, so a second server on the same file, or a restore under a running
// one, is refused; commands that only read or write rows (keys, users,
// backup) do not take it. On PostgreSQL, and in memory, it does nothing.
func LockServer(path string) (unlock func(), err error) {
	if IsPostgresURL(path) || path == MemoryPath {
		return func() {}, nil
	}
	name := filePath(path) + "-lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	held, err := lockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if held {
		f.Close()
		return nil, fmt.Errorf("%w (%s is locked)", ErrServerRunning, name)
	}
	return func() { f.Close() }, nil
}
