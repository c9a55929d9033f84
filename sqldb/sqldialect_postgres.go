package sqldb

import (
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
)

// postgresDialect is PostgreSQL's spelling. Its JSON functions take json or
// jsonb, never text, so the TEXT columns are cast; a parameter is cast to
// text first, which types it. PostgreSQL refuses "\u0000" in any JSON it
// reads by path or element as text (22P05).
type postgresDialect struct{}

// IndexedBy: PostgreSQL's planner takes no hints, and has statistics.
func (postgresDialect) IndexedBy(table, index string) string { return table }

func (postgresDialect) NotIndexed(table string) string { return table }

// OrderedJoin: PostgreSQL accepts no ON after CROSS JOIN, and orders a
// plain JOIN by its statistics.
func (postgresDialect) OrderedJoin() string { return "JOIN" }

// SkipLocked: as River claims. A row another claim changed meanwhile is
// read again as it now is, and dropped when it no longer qualifies.
func (postgresDialect) SkipLocked() string { return " FOR UPDATE SKIP LOCKED" }

func (postgresDialect) Instr(haystack, needle string) string {
	return "strpos(" + haystack + ", " + needle + ")"
}

// Substring: pg_trgm's GIN indexes (migrations/postgres) serve LIKE
// '%needle%', case-sensitive as instr is. Text cannot hold a NUL, so a
// needle holding one matches nothing.
func (postgresDialect) Substring(args []any, expr, needle string) (string, []any) {
	if strings.ContainsRune(needle, 0) {
		return "1 = 0", args
	}
	return expr + ` LIKE '%' || ? || '%'`, append(args, LikeEscaper.Replace(needle))
}

func (postgresDialect) SuffixTable() bool { return false }

func (postgresDialect) LikeAnyCase() string { return "ILIKE" }

func (postgresDialect) JSONTexts(expr, alias string) string {
	if alias == "" {
		alias = "e"
	}
	return "json_array_elements_text(" + pgJSON(expr) + ") AS " + alias + "(value)"
}

func (postgresDialect) JSONElements(expr, alias string) string {
	return "json_array_elements(" + pgJSON(expr) + ") AS " + alias + "(value)"
}

func (postgresDialect) JSONField(expr, key string) string {
	return expr + " ->> " + quoteLiteral(key)
}

// JSONGet: a JSON null is not SQL's NULL here.
func (postgresDialect) JSONGet(doc, key string) string {
	return "nullif(CAST(" + pgJSON(doc) + " -> " + quoteLiteral(key) + " AS text), 'null')"
}

// JSONEquals: jsonb's equality is SQLite's typed comparison. A document
// holding "\u0000" matches nothing, as does a value holding one, rather
// than failing the whole query.
func (postgresDialect) JSONEquals(args []any, doc string, path []string, v any) (string, []any) {
	value, err := json.Marshal(v)
	if err != nil || strings.Contains(string(value), `\u0000`) {
		return "1 = 0", args
	}
	return `CASE WHEN strpos(` + doc + `, '\u0000') = 0 THEN CAST(` + doc + ` AS jsonb) #> CAST(? AS text[]) END = CAST(? AS jsonb)`,
		append(args, pgPath(path), string(value))
}

// JSONAppend writes the array's text as SQLite's json_insert does: the feed
// copies it into its items as it is stored.
func (postgresDialect) JSONAppend(array, value string) string {
	return `left(` + array + `, -1) || CASE WHEN ` + array + ` = '[]' THEN '' ELSE ',' END
		|| CAST(to_json(CAST(` + value + ` AS text)) AS text) || ']'`
}

// JSONSet merges one member into each object on the path, a level of
// subquery each, so that the object each level reads is spelled once.
func (postgresDialect) JSONSet(doc string, path []string, value string) string {
	return "CAST(" + pgSet("CAST("+doc+" AS jsonb)", path, value, 0) + " AS text)"
}

// pgSet is the jsonb object obj with value at path; depth names its
// subquery apart from the enclosing ones.
func pgSet(obj string, path []string, value string, depth int) string {
	key := quoteLiteral(path[0])
	if len(path) == 1 {
		return "(" + obj + " || jsonb_build_object(" + key + ", CAST(" + value + " AS text)))"
	}
	j := "j" + strconv.Itoa(depth)
	member := j + " -> " + key
	inner := "CASE WHEN jsonb_typeof(" + member + ") = 'object' THEN " + member + " ELSE CAST('{}' AS jsonb) END"
	return "(SELECT " + j + " || jsonb_build_object(" + key + ", " + pgSet(inner, path[1:], value, depth+1) +
		") FROM (SELECT " + obj + " AS " + j + ") AS x" + strconv.Itoa(depth) + ")"
}

func (postgresDialect) JSONRemoveKey(doc, key string) string {
	return "CAST(CAST(" + doc + " AS jsonb) - CAST(" + key + " AS text) AS text)"
}

func (postgresDialect) JSONHasKey(doc, key string) string {
	return "jsonb_exists(CAST(" + doc + " AS jsonb), CAST(" + key + " AS text))"
}

// postgresSnapshot: PostgreSQL's default isolation takes a new snapshot
// per statement.
var postgresSnapshot = &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}

func (postgresDialect) SnapshotTx() *sql.TxOptions { return postgresSnapshot }

// Notify: NOTIFY is delivered when, and only if, its transaction commits.
func (postgresDialect) Notify(channel, payload string) string {
	return "pg_notify(" + channel + ", " + payload + ")"
}

func (postgresDialect) LockShared(key string) string {
	return "pg_advisory_xact_lock_shared(hashtextextended(" + key + ", 0))"
}

// pgJSON is expr, text, as json.
func pgJSON(expr string) string { return "CAST(CAST(" + expr + " AS text) AS json)" }

// pgPath is a JSON path as the #> operator takes it: a text[] literal,
// each element quoted.
func pgPath(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = `"` + jsonKeyEscaper.Replace(k) + `"`
	}
	return "{" + strings.Join(q, ",") + "}"
}
