//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly || illumos || windows)

package sqldb

import "os"

// lockFile locks nothing where the system has no file locks Go reaches
// (wasm, plan9, aix, solaris): the refusal of a restore under a running server is then
// the operator's to keep.
func lockFile(*os.File) (held bool, err error) { return false, nil }
