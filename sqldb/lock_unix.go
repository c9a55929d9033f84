//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly || illumos

package sqldb

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f without waiting; held reports that
// another open file holds it. flock, not fcntl: an fcntl lock belongs to
// the process, so a second open in the same process would share it, and
// closing any descriptor of the file would drop it.
func lockFile(f *os.File) (held bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}
