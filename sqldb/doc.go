// Package sqldb is Herald's database, SQLite or PostgreSQL, and what lets
// several Herald processes share one: opening and migrating it, its two
// pools (one writer, many readers; a statement's kind picks between them)
// and their cached prepared statements, the Dialect that spells what the
// two engines write apart and the connector that numbers PostgreSQL's
// placeholders, hooks that run after a commit, retried transactions,
// advisory locks, instance heartbeats, NOTIFY and LISTEN with the caches
// they keep coherent, and the ids and time format rows are written with.
// It imports no other Herald package.
package sqldb
