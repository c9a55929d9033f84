package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Herald's stores write one dialect of SQL, SQLite's, where it and
// PostgreSQL agree; the few constructs where they differ in structure ask
// DB.Postgres. What differs only in spelling is translated here, once per
// distinct query text, by a database/sql connector wrapped around pgx's:
//
//   - "?" and "?N" placeholders become "$N";
//   - SQLite's index hints ("INDEXED BY name", "NOT INDEXED") are dropped:
//     PostgreSQL's planner takes none;
//   - a Go bool argument is bound as 1 or 0, as SQLite stores it, since the
//     flags are BIGINT columns on both databases.
//
// String literals, quoted identifiers and comments are copied untouched.

// pgConnector opens pgx connections that speak the translated SQL.
type pgConnector struct{ driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: conn.(*stdlib.Conn)}, nil
}

// pgConn is a pgx connection whose statements are translated first.
type pgConn struct{ *stdlib.Conn }

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(translate(query))
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, translate(query))
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, translate(query), args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, translate(query), args)
}

func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
		return nil
	}
	return c.Conn.CheckNamedValue(nv)
}

// openPostgres returns a pool on cfg whose connections translate SQLite's
// spelling.
func openPostgres(cfg *pgx.ConnConfig) *sql.DB {
	return sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)})
}

// translations caches translate's answers: the stores use a few hundred
// distinct query texts.
var translations sync.Map // string → string

// translate rewrites query from SQLite's spelling to PostgreSQL's.
func translate(query string) string {
	if t, ok := translations.Load(query); ok {
		return t.(string)
	}
	t := translateText(query)
	translations.Store(query, t)
	return t
}

func translateText(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0 // placeholders so far
	for i := 0; i < len(q); {
		switch c := q[i]; {
		case c == '\'' || c == '"':
			j := closing(q, i+1, c)
			b.WriteString(q[i:j])
			i = j
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteString("$" + q[i+1:j])
			} else {
				n++
				b.WriteString("$" + strconv.Itoa(n))
			}
			i = j
		case isWordStart(q, i) && wordPrefix(q[i:], "INDEXED BY") > 0:
			i = skipSpace(q, i+wordPrefix(q[i:], "INDEXED BY"))
			for i < len(q) && isIdentByte(q[i]) {
				i++
			}
		case isWordStart(q, i) && wordPrefix(q[i:], "NOT INDEXED") > 0:
			i += wordPrefix(q[i:], "NOT INDEXED")
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// closing returns the index just past the quote closing the literal that
// starts before from, where a doubled quote is an escaped one.
func closing(q string, from int, quote byte) int {
	for i := from; i < len(q); i++ {
		if q[i] == quote {
			if i+1 < len(q) && q[i+1] == quote {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(q)
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isWordStart(q string, i int) bool { return i == 0 || !isIdentByte(q[i-1]) }

// wordPrefix returns the length of the words of w at the start of s, in any
// case, with any white space between them and a word boundary after them;
// 0 when s does not start with them.
func wordPrefix(s, w string) int {
	i := 0
	for k, word := range strings.Fields(w) {
		if k > 0 {
			i = skipSpace(s, i)
		}
		if len(s)-i < len(word) || !strings.EqualFold(s[i:i+len(word)], word) {
			return 0
		}
		i += len(word)
		if i < len(s) && isIdentByte(s[i]) {
			return 0
		}
	}
	return i
}

func skipSpace(q string, i int) int {
	for i < len(q) && (q[i] == ' ' || q[i] == '\n' || q[i] == '\t' || q[i] == '\r') {
		i++
	}
	return i
}

// Instr is SQLite's instr(haystack, needle), on PostgreSQL when postgres:
// the 1-based position of needle in haystack, 0 when it is not there.
// PostgreSQL's strpos takes the same arguments.
func Instr(postgres bool, haystack, needle string) string {
	if postgres {
		return "strpos(" + haystack + ", " + needle + ")"
	}
	return "instr(" + haystack + ", " + needle + ")"
}
