package messaging

import (
	"encoding/json"
	"strings"

	"github.com/herald-notify/herald/sqldb"
)

// dialect spells the few SQL fragments of this package whose structure
// differs between the databases: SQLite's JSON1 functions (json_each,
// json_extract, json_insert, json_set) have no namesakes on PostgreSQL,
// where the JSON columns, TEXT on both, are cast to json or jsonb.
// sqldb/dialect.go translates what differs only in spelling.
type dialect struct{ pg bool }

// sql returns the dialect of s's database.
func (s *Store) sql() dialect { return dialect{pg: s.db.Postgres} }

// idsIn is the condition that col is one of the ids in the JSON array bound
// to param ("?" or "?N"). The ids are one parameter, whatever their
// number: a parameter each passed SQLite's limit of 32,766 with a long
// enough list.
func (d dialect) idsIn(col, param string) string {
	if d.pg {
		return col + ` IN (SELECT value FROM json_array_elements_text(CAST(` + param + ` AS json)) AS ids(value))`
	}
	return col + ` IN (SELECT value FROM json_each(` + param + `))`
}

// idList is ids as the JSON array idsIn binds. An id holding a NUL
// character names no message (ids are hex), and PostgreSQL refuses to read
// one out of JSON (22P05), so it is left out.
func idList(ids []string) string {
	keep := make([]string, 0, len(ids))
	for _, id := range ids {
		if !strings.ContainsRune(id, 0) {
			keep = append(keep, id)
		}
	}
	b, _ := json.Marshal(keep)
	return string(b)
}

// anyTag is the condition that the JSON array of strings in messages.tags
// holds one of n tags bound after it.
func (d dialect) anyTag(n int) string {
	each := `json_each(messages.tags)`
	if d.pg {
		each = `json_array_elements_text(CAST(messages.tags AS json)) AS tags(value)`
	}
	return `EXISTS (SELECT 1 FROM ` + each + ` WHERE value IN (` + sqldb.Placeholders(n) + `))`
}

// appendTime is the JSON array of times in col with the time bound to
// param appended, as compact as SQLite's json_insert writes it: the feed
// copies delivered_at into its items as it is stored.
func (d dialect) appendTime(col, param string) string {
	if d.pg {
		return `left(` + col + `, -1) || CASE WHEN ` + col + ` = '[]' THEN '' ELSE ',' END
			|| CAST(to_json(CAST(` + param + ` AS text)) AS text) || ']'`
	}
	return `json_insert(` + col + `, '$[#]', ` + param + `)`
}

// pgPath is a JSON path, one element per key, as PostgreSQL's #> operator
// takes it: a text[] literal, each element quoted.
func pgPath(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(k) + `"`
	}
	return "{" + strings.Join(q, ",") + "}"
}

// pgJSONEquals is PostgreSQL's condition that the JSON document in the
// text column col holds v at path, and its arguments. jsonb's equality is
// SQLite's typed comparison: the same JSON type and value (numbers by
// value, 1 = 1.0), arrays and objects as whole values. PostgreSQL refuses
// "\u0000" in any JSON it reads by path, json or jsonb (22P05): a document
// holding one matches nothing, as does a value holding one, rather than
// failing the whole query.
func pgJSONEquals(col string, path []string, v any) (string, []any) {
	value, err := json.Marshal(v)
	if err != nil || strings.Contains(string(value), `\u0000`) {
		return "1 = 0", nil
	}
	return `CASE WHEN strpos(` + col + `, '\u0000') = 0 THEN CAST(` + col + ` AS jsonb) #> CAST(? AS text[]) END = CAST(? AS jsonb)`,
		[]any{pgPath(path), string(value)}
}

// setAction is the cta column with its action's status set to the value
// bound to ?1 and its result's type to ?2; SQLite's json_set makes the
// result object when it is missing, and so does PostgreSQL's spelling.
func (d dialect) setAction() string {
	if d.pg {
		return `CAST(jsonb_set(CAST(cta AS jsonb), '{action}', (CAST(cta AS jsonb) -> 'action')
			|| jsonb_build_object('status', CAST(?1 AS text), 'result',
				CASE WHEN jsonb_typeof(CAST(cta AS jsonb) #> '{action,result}') = 'object'
					THEN CAST(cta AS jsonb) #> '{action,result}' ELSE CAST('{}' AS jsonb) END
				|| jsonb_build_object('type', CAST(?2 AS text)))) AS text)`
	}
	return `json_set(cta, '$.action.status', ?1, '$.action.result.type', ?2)`
}
