package sqldb_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestDialect runs every method of sqldb.Dialect on each engine at
// hand, SQLite always and PostgreSQL when TEST_DATABASE_URL is set, and
// holds each answer to one expectation: where the engines' SQL differs,
// their answers do not.
func TestDialect(t *testing.T) {
	engines := dialectEngines(t)
	covered := map[string]bool{}
	for _, tc := range dialectCases() {
		covered[tc.method] = true
		for _, e := range engines {
			t.Run(tc.method+"/"+tc.name+"/"+e.name, func(t *testing.T) { tc.run(t, e) })
		}
	}
	methods := reflect.TypeFor[sqldb.Dialect]()
	for i := range methods.NumMethod() {
		if name := methods.Method(i).Name; !covered[name] {
			t.Errorf("Dialect.%s has no case", name)
		}
	}
}

// dialectEngine is one database the cases run on.
type dialectEngine struct {
	name string
	db   *sqldb.DB
	d    sqldb.Dialect
	url  string // where another process opens the same database
}

type dialectCase struct {
	method, name string
	run          func(t *testing.T, e dialectEngine)
}

// dialectEngines opens a migrated database on each engine at hand, with
// dialect_rows, the rows the cases read.
func dialectEngines(t *testing.T) []dialectEngine {
	t.Helper()
	urls := map[string]string{"sqlite": filepath.Join(t.TempDir(), "herald.db")} // WAL: a snapshot beside a writer
	if sqldbtest.OnPostgres() {
		urls["postgres"] = sqldbtest.NewPostgresURL(t)
	}
	var out []dialectEngine
	for _, name := range []string{"sqlite", "postgres"} {
		url, ok := urls[name]
		if !ok {
			continue
		}
		db, err := sqldb.Open(context.Background(), url)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		t.Cleanup(func() { db.Close() })
		if err := sqldb.Migrate(db, migrations.FS); err != nil {
			t.Fatalf("migrate %s: %v", name, err)
		}
		for _, q := range []string{
			`CREATE TABLE dialect_rows (id BIGINT PRIMARY KEY, k TEXT NOT NULL, doc TEXT NOT NULL, list TEXT NOT NULL DEFAULT '[]')`,
			`CREATE INDEX dialect_rows_k ON dialect_rows (k)`,
			`INSERT INTO dialect_rows (id, k, doc, list) VALUES
				(1, 'a', '{"s":"x","n":1,"b":true,"z":null,"a":[1,2],"o":{"p":"q"},"d.e":2}', '["x","y"]'),
				(2, 'b', '{"n":1.0,"b":1}', '[]'),
				(3, '50%_off', '{"n":"1","s":["x"]}', '["y"]')`,
		} {
			if _, err := db.ExecContext(context.Background(), q); err != nil {
				t.Fatalf("%s: %s: %v", name, q, err)
			}
		}
		out = append(out, dialectEngine{name: name, db: db, d: db.Dialect(), url: url})
	}
	return out
}

// column runs query on e and returns its one column, NULL as "NULL".
func column(t *testing.T, e dialectEngine, query string, args ...any) []string {
	t.Helper()
	rows, err := e.db.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s\n%v", query, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v sql.NullString
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, map[bool]string{true: v.String, false: "NULL"}[v.Valid])
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s\n%v", query, err)
	}
	return out
}

// rowsCase is a case whose query, built by the dialect, answers want.
func rowsCase(method, name string, build func(d sqldb.Dialect) (string, []any), want ...string) dialectCase {
	return dialectCase{method, name, func(t *testing.T, e dialectEngine) {
		q, args := build(e.d)
		is.New(t).Equal(column(t, e, q, args...), append([]string{}, want...)) // the answer both engines give
	}}
}

// jsonCase is a case whose query answers one JSON document equal to want.
func jsonCase(method, name string, build func(d sqldb.Dialect) (string, []any), want string) dialectCase {
	return dialectCase{method, name, func(t *testing.T, e dialectEngine) {
		is := is.New(t)
		q, args := build(e.d)
		got := column(t, e, q, args...)
		is.Equal(len(got), 1) // one document
		var g, w any
		is.NoErr(json.Unmarshal([]byte(got[0]), &g)) // the answer is JSON
		is.NoErr(json.Unmarshal([]byte(want), &w))
		is.Equal(g, w) // the document both engines give
	}}
}

// where is a query of the ids of dialect_rows meeting cond.
func where(cond string, args []any) (string, []any) {
	return `SELECT id FROM dialect_rows WHERE ` + cond + ` ORDER BY id`, args
}

func dialectCases() []dialectCase {
	cases := []dialectCase{
		rowsCase("IndexedBy", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT r.id FROM ` + d.IndexedBy("dialect_rows r", "dialect_rows_k") + ` WHERE r.k = ?`, []any{"a"}
		}, "1"),
		rowsCase("NotIndexed", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT r.id FROM ` + d.NotIndexed("dialect_rows r") + ` WHERE r.k = ?`, []any{"b"}
		}, "2"),
		rowsCase("OrderedJoin", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT r.id FROM (SELECT ? AS k) f ` + d.OrderedJoin() + ` dialect_rows r ON r.k = f.k`, []any{"a"}
		}, "1"),
		rowsCase("SkipLocked", "OK", func(d sqldb.Dialect) (string, []any) {
			return `UPDATE dialect_rows SET k = k WHERE id IN (SELECT id FROM dialect_rows
				WHERE k <> ? ORDER BY id LIMIT 1` + d.SkipLocked() + `) RETURNING id`, []any{"a"}
		}, "2"),
		rowsCase("Instr", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT ` + d.Instr("?", "?") + ` UNION ALL SELECT ` + d.Instr("?", "?"), []any{"hello", "ll", "hello", "z"}
		}, "3", "0"),
		rowsCase("LikeAnyCase", "OK", func(d sqldb.Dialect) (string, []any) {
			return where(`k `+d.LikeAnyCase()+` ? ESCAPE '\'`, []any{sqldb.LikeEscaper.Replace("A")})
		}, "1"),
		{"SuffixTable", "OK", func(t *testing.T, e dialectEngine) {
			_, err := e.db.ExecContext(context.Background(), `SELECT count(*) FROM subscriber_suffixes`)
			is.New(t).Equal(err == nil, e.d.SuffixTable()) // the schema keeps the table when the dialect says so
		}},
		rowsCase("JSONTexts", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT value FROM ` + d.JSONTexts("?", "") + ` ORDER BY value`, []any{`["b","a","é"]`}
		}, "a", "b", "é"),
		rowsCase("JSONTexts", "OKColumn", func(d sqldb.Dialect) (string, []any) {
			return where(`EXISTS (SELECT 1 FROM `+d.JSONTexts("dialect_rows.list", "l")+` WHERE l.value = ?)`, []any{"x"})
		}, "1"),
		rowsCase("JSONElements", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT ` + d.JSONField("t.value", "topicKey") + ` FROM ` + d.JSONElements("?", "t"),
				[]any{`[{"topicKey":"t1"},{"topicKey":"t2","x":1},{}]`}
		}, "t1", "t2", "NULL"),
		rowsCase("JSONField", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT ` + d.JSONField("e.value", "n") + ` FROM ` + d.JSONElements("?", "e"), []any{`[{"n":1},{"n":"two"}]`}
		}, "1", "two"),
		rowsCase("JSONGet", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT coalesce(` + d.JSONGet("?", "o") + `, '{}')`, []any{`{"o":{"p":"q"}}`}
		}, `{"p":"q"}`),
		rowsCase("JSONGet", "OKAbsentOrNull", func(d sqldb.Dialect) (string, []any) {
			return `SELECT ` + d.JSONGet("?", "o") + ` UNION ALL SELECT ` + d.JSONGet("?", "o"), []any{`{}`, `{"o":null}`}
		}, "NULL", "NULL"),
		rowsCase("JSONAppend", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT ` + d.JSONAppend("?1", "?2") + ` UNION ALL SELECT ` + d.JSONAppend("?3", "?2"),
				[]any{`[]`, "2026-11-21T10:04:05.123Z", `["a"]`}
		}, `["2026-11-21T10:04:05.123Z"]`, `["a","2026-11-21T10:04:05.123Z"]`),
		jsonCase("JSONSet", "OK", func(d sqldb.Dialect) (string, []any) {
			cta := d.JSONSet(d.JSONSet("CAST(?1 AS text)", []string{"action", "status"}, "?2"), []string{"action", "result", "type"}, "?3")
			return `SELECT ` + cta, []any{`{"action":{"buttons":[{"type":"primary"}],"result":{"payload":{}}}}`, "done", "primary"}
		}, `{"action":{"buttons":[{"type":"primary"}],"status":"done","result":{"payload":{},"type":"primary"}}}`),
		jsonCase("JSONSet", "OKMakesObjects", func(d sqldb.Dialect) (string, []any) {
			return `SELECT ` + d.JSONSet("CAST(?1 AS text)", []string{"a", "b.c"}, "?2"), []any{`{"x":1}`, "v"}
		}, `{"x":1,"a":{"b.c":"v"}}`),
		jsonCase("JSONRemoveKey", "OK", func(d sqldb.Dialect) (string, []any) {
			return `SELECT ` + d.JSONRemoveKey("CAST(?1 AS text)", "?2"), []any{`{"email":true,"sms":false}`, "email"}
		}, `{"sms":false}`),
		rowsCase("JSONHasKey", "OK", func(d sqldb.Dialect) (string, []any) {
			return where(d.JSONHasKey("doc", "?"), []any{"z"})
		}, "1"),
		rowsCase("JSONHasKey", "OKMissing", func(d sqldb.Dialect) (string, []any) {
			return where(d.JSONHasKey("doc", "?"), []any{"nope"})
		}),
		{"SnapshotTx", "OK", testSnapshotTx},
		{"Notify", "OK", testNotify},
		{"LockShared", "OK", testLockShared},
	}
	for _, m := range []struct {
		name string
		path []string
		v    any
		want []string
	}{
		{"OKString", []string{"s"}, "x", []string{"1"}},
		{"OKNumber", []string{"n"}, 1.0, []string{"1", "2"}},
		{"OKNumberIsNotText", []string{"n"}, "1", []string{"3"}},
		{"OKTrueIsNotOne", []string{"b"}, true, []string{"1"}},
		{"OKNull", []string{"z"}, nil, []string{"1"}},
		{"OKArray", []string{"a"}, []any{1.0, 2.0}, []string{"1"}},
		{"OKObject", []string{"o"}, map[string]any{"p": "q"}, []string{"1"}},
		{"OKNested", []string{"o", "p"}, "q", []string{"1"}},
		{"OKDotInKey", []string{"d.e"}, 2.0, []string{"1"}},
		{"OKNULValue", []string{"s"}, "x\x00", nil},
	} {
		cases = append(cases, rowsCase("JSONEquals", m.name, func(d sqldb.Dialect) (string, []any) {
			return where(d.JSONEquals(nil, "doc", m.path, m.v))
		}, m.want...))
	}
	for _, s := range []struct {
		name, needle string
		want         []string
	}{
		{"OK", "_o", []string{"3"}},
		{"OKWildcardsLiteral", "%_", []string{"3"}},
		{"OKCaseSensitive", "A", nil},
		{"OKNoMatch", "5_", nil},
	} {
		cases = append(cases, rowsCase("Substring", s.name, func(d sqldb.Dialect) (string, []any) {
			return where(d.Substring(nil, "k", s.needle))
		}, s.want...))
	}
	return cases
}

// testSnapshotTx reads dialect_rows twice in one snapshot (BeginSnapshot's,
// in SnapshotTx), a write committing between the reads.
func testSnapshotTx(t *testing.T, e dialectEngine) {
	is := is.New(t)
	ctx := context.Background()
	tx, err := e.db.BeginSnapshot(ctx)
	is.NoErr(err) // snapshot begun
	defer tx.Rollback()
	count := func() (n int) {
		is.NoErr(tx.QueryRowContext(ctx, `SELECT count(*) FROM dialect_rows`).Scan(&n)) // counted
		return n
	}
	before := count()
	_, err = e.db.ExecContext(ctx, `INSERT INTO dialect_rows (id, k, doc) VALUES (?, 'new', '{}')`, 100+len(e.name))
	is.NoErr(err)             // a write commits meanwhile
	is.Equal(count(), before) // the snapshot does not see it
	_, err = tx.ExecContext(ctx, `DELETE FROM dialect_rows`)
	is.True(err != nil) // nor writes
}

// testNotify sends a notification through the dialect's Notify, which
// another process hears once its transaction commits.
func testNotify(t *testing.T, e dialectEngine) {
	is := is.New(t)
	if !e.db.Shared() {
		is.Equal(e.d.Notify("?", "?"), "") // nothing to tell where one process owns the database
		return
	}
	peer, err := sqldb.Open(context.Background(), e.url)
	is.NoErr(err) // another process on the database
	defer peer.Close()
	heard, listening := make(chan string, 1), make(chan struct{}, 1)
	peer.Listen("herald_dialect", sqldb.Listener{
		Notified: func(p string) { heard <- p },
		Reset:    func() { listening <- struct{}{} },
	})
	<-listening
	is.NoErr(e.db.Tx(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`SELECT `+e.d.Notify("?", "?"), "herald_dialect", e.db.NotifyPayload("hi"))
		return err
	})) // sent on commit
	select {
	case p := <-heard:
		is.Equal(p, "hi") // the payload as sent
	case <-time.After(5 * time.Second):
		t.Fatal("the other process heard nothing")
	}
}

// testLockShared takes the shared lock on a key in a transaction, and
// sees it held there.
func testLockShared(t *testing.T, e dialectEngine) {
	is := is.New(t)
	if !e.db.Shared() {
		is.Equal(e.d.LockShared("?"), "") // nothing to lock where one writer serialises writes
		return
	}
	is.NoErr(e.db.Tx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`SELECT `+e.d.LockShared("?"), "message_payloads:n1"); err != nil {
			return err
		}
		var n int
		err := tx.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ShareLock'
			AND pid = pg_backend_pid()`).Scan(&n)
		is.Equal(n, 1) // held, shared, until the transaction ends
		return err
	}))
}
