// Package migrations holds every schema change of Herald's SQLite database as
// plain .sql files, embedded so the binary carries its own schema.
//
// Files are named NNNNNN_<what>.up.sql / .down.sql and are append-only: never
// edit a migration that has shipped; add the next number instead.
package migrations

import "embed"

// FS is the migration source read by golang-migrate's iofs driver.
//
//go:embed *.sql
var FS embed.FS
