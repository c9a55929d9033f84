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

// Herald's stores write SQL with "?" and "?N" placeholders, which SQLite
// takes and PostgreSQL does not; everything else that differs between the
// two is spelled by the Dialect (sqldialect.go). The placeholders become
// "$N" here, once per distinct query text, by a database/sql connector
// wrapped around pgx's. String literals, quoted identifiers and comments
// are copied untouched.

// pgConnector opens pgx connections that speak the translated SQL. wire,
// set on the writer's, counts their traffic and lets their transactions
// hold statements back (pipeline.go).
type pgConnector struct {
	driver.Connector
	wire *wireCounts
}

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: conn.(*stdlib.Conn), wire: c.wire}, nil
}

// pgConn is a pgx connection whose statements are translated first.
type pgConn struct {
	*stdlib.Conn
	wire *wireCounts

	// In a transaction of BeginTx, the statements held back (its BEGIN
	// first, until sent), never nil; nil outside one.
	pending []held
	begun   bool // the BEGIN was sent
}

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	q := translate(query)
	st, err := c.Conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return &pgStmt{Stmt: st.(*stdlib.Stmt), c: c, query: q}, nil
}

// openPostgres returns a pool on cfg whose connections number the
// placeholders; wire, when not nil, is the writer's (see pgConnector).
func openPostgres(cfg *pgx.ConnConfig, wire *wireCounts) *sql.DB {
	return sql.OpenDB(pgConnector{Connector: stdlib.GetConnector(*cfg), wire: wire})
}

// translations caches translate's answers: the stores use a few hundred
// distinct query texts.
var translations sync.Map // string → string

// translate numbers query's placeholders as PostgreSQL takes them.
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
