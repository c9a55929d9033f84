package activity

import "strings"

// The few fragments of activity's SQL that PostgreSQL spells differently
// from SQLite, beside SQLite's own (platform's dialect translates what
// differs only in placeholders and index hints). pg selects PostgreSQL's.

// jsonTexts is a FROM item named alias ("" for none) whose column value
// holds each element of the JSON array of text that expr holds (a column
// or a parameter).
func jsonTexts(pg bool, expr, alias string) string {
	if pg {
		return "json_array_elements_text(" + asJSON(expr) + ") AS " + cmpOr(alias, "e") + "(value)"
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

func cmpOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// hasTopicKey is a condition true when the JSON array of a notification's
// topics, expr, has an entry whose topicKey is bound to its placeholder.
func hasTopicKey(pg bool, expr string) string {
	if pg {
		return "EXISTS (SELECT 1 FROM json_array_elements(" + asJSON(expr) + ") AS e WHERE e ->> 'topicKey' = ?)"
	}
	return "EXISTS (SELECT 1 FROM json_each(" + expr + ") WHERE json_extract(value, '$.topicKey') = ?)"
}

// instr is SQLite's instr(haystack, needle): the 1-based position of
// needle in haystack, 0 when it is not there.
func instr(pg bool, haystack, needle string) string {
	if pg {
		return "strpos(" + haystack + ", " + needle + ")"
	}
	return "instr(" + haystack + ", " + needle + ")"
}

// crossJoin joins a FROM item to the next in the order written: SQLite
// takes CROSS JOIN as that hint, PostgreSQL accepts no ON after CROSS JOIN.
func crossJoin(pg bool) string {
	if pg {
		return "JOIN"
	}
	return "CROSS JOIN"
}
