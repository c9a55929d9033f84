package sqldb

import (
	"database/sql"
	"strings"
)

// Dialect spells the SQL fragments whose text differs between the two
// engines Herald runs on: SQLite, one process owning the database, and
// PostgreSQL, shared by several. The stores write everything else once, in
// the SQL both accept, with "?" placeholders (the PostgreSQL connector
// numbers them); where the engines differ, a query calls one of these
// methods, so a reader sees the place and finds each engine's spelling in
// sqldialect_sqlite.go and sqldialect_postgres.go. A fragment that sits in
// a hot query is built once, when its store is made, not per call.
//
// Expressions passed in (expr, doc, key, value…) are SQL: a column, a
// placeholder, or a fragment of another method. A fragment may spell an
// expression more than once, so a placeholder passed in is numbered ("?1").
// The JSON columns are TEXT on both engines.
type Dialect interface {
	// IndexedBy is table, with an alias when it has one ("notifications
	// n"), read through index: SQLite's planner takes the hint, where
	// without statistics it would pick another; PostgreSQL's takes none.
	IndexedBy(table, index string) string
	// NotIndexed is table read by its primary key alone.
	NotIndexed(table string) string
	// OrderedJoin joins the FROM item before it to the one after, with an
	// ON clause, keeping the one before outermost.
	OrderedJoin() string
	// SkipLocked ends a subquery that picks rows to claim: on a shared
	// database it locks them and skips those another claim holds, so two
	// claims never pick one row.
	SkipLocked() string

	// Instr is the 1-based position of needle in haystack, 0 when it is not
	// there.
	Instr(haystack, needle string) string
	// Substring is the condition that needle, a Go string, is in the text
	// expr, case-sensitive, in the form that the engine's substring index
	// serves; it appends its arguments to args.
	Substring(args []any, expr, needle string) (string, []any)
	// SuffixTable reports whether substring searches start from a suffix
	// table (subscriber_suffixes) the schema keeps beside Substring.
	SuffixTable() bool
	// LikeAnyCase is the LIKE operator that ignores ASCII case.
	LikeAnyCase() string

	// JSONTexts is a FROM item named alias ("" for none) whose column
	// value holds, as text, each element of the JSON array of strings expr
	// holds.
	JSONTexts(expr, alias string) string
	// JSONElements is a FROM item named alias whose column value holds
	// each element of the JSON array expr holds, as JSON.
	JSONElements(expr, alias string) string
	// JSONField is the text at key of the JSON object expr, a column value
	// of JSONElements.
	JSONField(expr, key string) string
	// JSONGet is the JSON object or array at key of the JSON document doc,
	// as text; NULL when key is absent or null.
	JSONGet(doc, key string) string
	// JSONEquals is the condition that the JSON document doc holds v at
	// path, the same JSON type and value (numbers by value, arrays and
	// objects whole); it appends its arguments to args. A document or
	// value holding "\u0000" may match nothing.
	JSONEquals(args []any, doc string, path []string, v any) (string, []any)
	// JSONAppend is the JSON array of strings array with the text value
	// appended, as compactly as SQLite writes it.
	JSONAppend(array, value string) string
	// JSONSet is the JSON object doc with the text value at path, the
	// objects on the way made when missing.
	JSONSet(doc string, path []string, value string) string
	// JSONRemoveKey is the JSON object doc without its member key (text).
	JSONRemoveKey(doc, key string) string
	// JSONHasKey is the condition that the JSON object doc has a member
	// key (text).
	JSONHasKey(doc, key string) string

	// SnapshotTx is the options of a read-only transaction whose every
	// statement sees the same committed state.
	SnapshotTx() *sql.TxOptions
	// Notify is an expression that tells the processes sharing the
	// database payload on channel when the transaction commits; "" where
	// one process owns the database.
	Notify(channel, payload string) string
	// LockShared is an expression that takes, until the transaction ends,
	// the lock on the text key (LockKey's) in shared mode; "" where one
	// process owns the database and its one writer serialises writes.
	LockShared(key string) string
}

// Dialect is the SQL dialect of db's engine.
func (db *DB) Dialect() Dialect {
	if db.Postgres {
		return postgresDialect{}
	}
	return sqliteDialect{}
}

// Flag is b as the flag columns hold it, 0 or 1: they are integers on both
// engines, and PostgreSQL binds no Go bool to one.
func Flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// LikeEscaper quotes LIKE's wildcards and its escape character, the
// backslash: PostgreSQL's default ESCAPE, and SQLite's with ESCAPE '\'.
var LikeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// quoteLiteral is s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// jsonKeyEscaper escapes a key inside a double-quoted JSON path label.
var jsonKeyEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)
