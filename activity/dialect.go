package activity

import (
	"cmp"
	"strings"
)

// The few fragments of activity's SQL that PostgreSQL spells differently
// from SQLite, beside SQLite's own (platform's dialect translates what
// differs only in placeholders and index hints). pg selects PostgreSQL's.

// jsonTexts is a FROM item named alias ("" for none) whose column value
// holds each element of the JSON array of text that expr holds (a column
// or a parameter).
func jsonTexts(pg bool, expr, alias string) string {
	if pg {
		return "json_array_elements_text(" + asJSON(expr) + ") AS " + cmp.Or(alias, "e") + "(value)"
	}
	return strings.TrimSpace("json_each(" + expr + ") " + alias)
}

// jsonElements is a FROM item named alias whose column value holds each
// element of the JSON array expr holds, as JSON.
func jsonElements(pg bool, expr, alias string) string {
	if pg {
		return "json_array_elements(" + asJSON(expr) + ") AS " + alias + "(value)"
	}
	return "json_each(" + expr + ") " + alias
}

// asJSON is expr, text, as PostgreSQL's json: a parameter is bound as
// text and cast.
func asJSON(expr string) string {
	return "CAST(CAST(" + expr + " AS text) AS json)"
}

// hasTopicKey is a condition true when the JSON array of a notification's
// topics, expr, has an entry whose topicKey is bound to its placeholder.
func hasTopicKey(pg bool, expr string) string {
	if pg {
		return "EXISTS (SELECT 1 FROM json_array_elements(" + asJSON(expr) + ") AS e WHERE e ->> 'topicKey' = ?)"
	}
	return "EXISTS (SELECT 1 FROM json_each(" + expr + ") WHERE json_extract(value, '$.topicKey') = ?)"
}

// crossJoin joins a FROM item to the next in the order written: SQLite
// takes CROSS JOIN as that hint, PostgreSQL accepts no ON after CROSS JOIN.
func crossJoin(pg bool) string {
	if pg {
		return "JOIN"
	}
	return "CROSS JOIN"
}
