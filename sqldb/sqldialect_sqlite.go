package sqldb

import (
	"database/sql"
	"encoding/json"
	"strings"
)

// sqliteDialect is SQLite's spelling: JSON through its JSON1 functions,
// index hints, and none of the locking a shared database needs.
type sqliteDialect struct{}

func (sqliteDialect) IndexedBy(table, index string) string {
	return table + " INDEXED BY " + index
}

func (sqliteDialect) NotIndexed(table string) string { return table + " NOT INDEXED" }

// OrderedJoin: SQLite's planner never reorders the tables of a CROSS JOIN.
func (sqliteDialect) OrderedJoin() string { return "CROSS JOIN" }

// SkipLocked: the one writer runs one claim at a time.
func (sqliteDialect) SkipLocked() string { return "" }

func (sqliteDialect) Instr(haystack, needle string) string {
	return "instr(" + haystack + ", " + needle + ")"
}

// Substring: instr on the rows the suffix table leaves.
func (sqliteDialect) Substring(args []any, expr, needle string) (string, []any) {
	return "instr(" + expr + ", ?) > 0", append(args, needle)
}

func (sqliteDialect) SuffixTable() bool { return true }

// LikeAnyCase: SQLite's LIKE ignores ASCII case already.
func (sqliteDialect) LikeAnyCase() string { return "LIKE" }

func (sqliteDialect) JSONTexts(expr, alias string) string {
	if alias == "" {
		return "json_each(" + expr + ")"
	}
	return "json_each(" + expr + ") " + alias
}

func (sqliteDialect) JSONElements(expr, alias string) string {
	return "json_each(" + expr + ") " + alias
}

func (sqliteDialect) JSONField(expr, key string) string {
	return expr + " ->> " + quoteLiteral(sqlitePath([]string{key}))
}

func (sqliteDialect) JSONGet(doc, key string) string {
	return "json_extract(" + doc + ", " + quoteLiteral(sqlitePath([]string{key})) + ")"
}

// JSONEquals compares through json_type, which names JSON's types where
// json_extract would read true as 1 and an array as its text.
func (sqliteDialect) JSONEquals(args []any, doc string, path []string, v any) (string, []any) {
	p := sqlitePath(path)
	switch v := v.(type) {
	case nil:
		return "json_type(" + doc + ", ?) = 'null'", append(args, p)
	case bool:
		return "json_type(" + doc + ", ?) = ?", append(args, p, map[bool]string{true: "true", false: "false"}[v])
	case string:
		return "(json_type(" + doc + ", ?) = 'text' AND json_extract(" + doc + ", ?) = ?)", append(args, p, p, v)
	case float64:
		return "(json_type(" + doc + ", ?) IN ('integer', 'real') AND json_extract(" + doc + ", ?) = ?)", append(args, p, p, v)
	default:
		b, _ := json.Marshal(v)
		return "(json_type(" + doc + ", ?) IN ('array', 'object') AND json_extract(" + doc + ", ?) = json(?))", append(args, p, p, string(b))
	}
}

func (sqliteDialect) JSONAppend(array, value string) string {
	return "json_insert(" + array + ", '$[#]', " + value + ")"
}

func (sqliteDialect) JSONSet(doc string, path []string, value string) string {
	return "json_set(" + doc + ", " + quoteLiteral(sqlitePath(path)) + ", " + value + ")"
}

func (sqliteDialect) JSONRemoveKey(doc, key string) string {
	return "json_remove(" + doc + ", '$.' || json_quote(" + key + "))"
}

func (sqliteDialect) JSONHasKey(doc, key string) string {
	return "json_type(" + doc + ", '$.' || json_quote(" + key + ")) IS NOT NULL"
}

// sqliteSnapshot: a read transaction on SQLite is a snapshot already.
var sqliteSnapshot = &sql.TxOptions{ReadOnly: true}

func (sqliteDialect) SnapshotTx() *sql.TxOptions { return sqliteSnapshot }

func (sqliteDialect) Notify(channel, payload string) string { return "" }

func (sqliteDialect) LockShared(key string) string { return "" }

// sqlitePath is the JSON path of the keys, each quoted, so that dots and
// spaces in a key are taken literally.
func sqlitePath(keys []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, k := range keys {
		b.WriteString(`."` + jsonKeyEscaper.Replace(k) + `"`)
	}
	return b.String()
}
