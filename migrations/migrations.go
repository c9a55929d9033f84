// Package migrations holds every schema change of Herald's SQLite database as
// plain .sql files, embedded so the binary carries its own schema.
//
// Files are named NNNNNN_<what>.up.sql / .down.sql and are append-only: never
// edit a migration that has shipped; add the next number instead.
//
// schema.sql is the schema all of them build, as SQLite reports it: read it
// to see the tables and indexes as they are. TestSchema fails when it is out
// of date; after adding a migration, regenerate it with
//
//	go test ./migrations -run TestSchema -update
package migrations

import "embed"

// FS is the migration source read by golang-migrate's iofs driver.
//
//go:embed *.up.sql *.down.sql postgres/*.sql
var FS embed.FS
