package subscribers

import (
	"slices"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// pageQuery is a cursor page request of the v2 topic lists (docs/api.md,
// "Lists and paging"): the ordering, a cursor on either side, and the size.
type pageQuery struct {
	orderBy       string // _id, createdAt or updatedAt
	desc          bool
	after, before *cursor
	limit         int
}

// readPageQuery reads limit, orderBy, orderDirection, after and before, as
// GET /v2/subscribers reads them; a cursor of another ordering, a forged
// one or both at once are 422s.
func readPageQuery(q *platform.Query) pageQuery {
	p := pageQuery{
		limit:   q.Int("limit", 10, 1, 100),
		orderBy: q.Enum("orderBy", "_id", "_id", "createdAt", "updatedAt"),
		desc:    strings.ToUpper(q.Enum("orderDirection", "DESC", "DESC", "ASC", "desc", "asc")) == "DESC",
	}
	after, before := q.String("after"), q.String("before")
	if after != "" && before != "" {
		q.Fail("before", before, "cannot be combined with after")
	}
	for _, c := range []struct {
		name, value string
		dst         **cursor
	}{{"after", after, &p.after}, {"before", before, &p.before}} {
		if c.value == "" {
			continue
		}
		cur, problem := decodeCursor(c.value, p.orderBy)
		if problem != "" {
			q.Fail(c.name, c.value, problem)
		}
		*c.dst = cur
	}
	return p
}

// sql returns the page's cursor condition (or "") with its arguments, and
// its ORDER BY and LIMIT clause over col, ties broken by idCol (col may be
// idCol itself): a before-page is read backwards, limit+1 rows to tell
// whether more lie beyond it (window).
func (p pageQuery) sql(col, idCol string) (cond string, args []any, tail string) {
	desc := p.desc
	c := p.after
	if p.before != nil {
		desc, c = !desc, p.before
	}
	op, dir := ">", "ASC"
	if desc {
		op, dir = "<", "DESC"
	}
	if c != nil {
		if col == idCol {
			cond, args = idCol+" "+op+" ?", []any{c.ID}
		} else {
			cond, args = "("+col+" "+op+" ? OR ("+col+" = ? AND "+idCol+" "+op+" ?))", []any{c.Value, c.Value, c.ID}
		}
	}
	order := col + " " + dir + ", " + idCol + " " + dir
	if col == idCol {
		order = idCol + " " + dir
	}
	return cond, args, " ORDER BY " + order + " LIMIT " + strconv.Itoa(p.limit+1)
}

// window trims the limit+1 rows sql read to the page, in the page's order,
// and returns the cursors around it: next when rows follow it, previous
// when rows precede it. at gives the cursor of a row.
func window[T any](p pageQuery, rows []T, at func(T) cursor) (page []T, next, previous *cursor) {
	more := len(rows) > p.limit
	if more {
		rows = rows[:p.limit]
	}
	if p.before != nil {
		slices.Reverse(rows)
	}
	if len(rows) == 0 {
		return rows, nil, nil
	}
	first, last := at(rows[0]), at(rows[len(rows)-1])
	switch {
	case p.before != nil:
		next = &last
		if more {
			previous = &first
		}
	default:
		if more {
			next = &last
		}
		if p.after != nil {
			previous = &first
		}
	}
	return rows, next, previous
}
