package sqldb

// A column may hold "" for the value most of its rows hold, or for one
// another column of the row already holds (docs/storage.md, "Values left
// out"): its writer stores LeftOut(value, common), and every reader
// selects LeftOutColumn(column, common), which puts the value back.

// LeftOut is what a column stores for value: "" when it is common.
func LeftOut(value, common string) string {
	if value == common {
		return ""
	}
	return value
}

// LeftOutColumn is an SQL expression reading column, which LeftOut wrote:
// its value, or common's, an SQL expression (a literal, another column),
// where it holds "".
func LeftOutColumn(column, common string) string {
	return `coalesce(nullif(` + column + `, ''), ` + common + `)`
}
