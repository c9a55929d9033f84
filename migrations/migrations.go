// Package migrations holds every schema change of Herald's databases as plain
// .sql files embedded in the binary, one sequence for SQLite and one for
// PostgreSQL (postgres/), named NNNNNN_<what>.up.sql and .down.sql and
// append-only: a shipped migration is never edited, the next number changes
// what it did. schema.sql is the SQLite schema they build, kept current by
// TestSchema, which regenerates it with:
//
//	go test ./migrations -run TestSchema -update
package migrations

import "embed"

// FS is the migration source read by golang-migrate's iofs driver.
//
//go:embed *.up.sql *.down.sql postgres/*.sql
var FS embed.FS
