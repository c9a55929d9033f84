package migrations_test

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/migrations"
	"github.com/herald-notify/herald/sqldb"
)

// suffixRows lists a subscriber's rows of subscriber_suffixes as
// "field:suffix", in index order.
func suffixRows(t *testing.T, db *sqldb.DB, seq int) string {
	t.Helper()
	return strings.Join(column(t, db, `SELECT field || ':' || suffix FROM subscriber_suffixes
		WHERE seq = ? ORDER BY field, suffix`, seq), " ")
}

// count answers a query that selects one integer, count(*) most often.
func count(t *testing.T, db *sqldb.DB, query string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// column returns the one text column that query selects, row by row.
func column(t *testing.T, db *sqldb.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSubscriberSuffixes checks that 000010 indexes the subscribers a
// database already has, and that its triggers keep exactly each
// subscriber's suffixes through inserts, updates and deletes: a stale
// suffix would not change an answer (every candidate is checked), only
// slow searches and grow the file, so only this test sees it.
func TestSubscriberSuffixes(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := openAt(t, "000009")

	insert := `INSERT INTO subscribers (seq, id, organization_id, environment_id, subscriber_id, first_name, last_name, email, phone, created_at, updated_at)
		VALUES (?, ?, 'o', 'e', ?, ?, ?, ?, ?, 'now', 'now')`
	_, err := db.ExecContext(ctx, insert, 1, "id1", "s1", "Al", nil, "a@b", nil)
	is.NoErr(err) // a subscriber of release 9

	is.NoErr(sqldb.Migrate(db, migrations.FS))                // up to the suffix index
	is.Equal(suffixRows(t, db, 1), "1:@b 1:a@b 1:b 3:Al 3:l") // indexed by the migration
	_, err = db.ExecContext(ctx, insert, 2, "id2", "s2", "Zoë", "Ng", nil, "+12")
	is.NoErr(err)                                                                           // inserted
	is.Equal(suffixRows(t, db, 2), "2:+12 2:12 2:2 3: Ng 3:Ng 3:Zoë Ng 3:g 3:oë Ng 3:ë Ng") // by character, not byte

	_, err = db.ExecContext(ctx, `UPDATE subscribers SET email = 'c@d', updated_at = 'later' WHERE seq = 1`)
	is.NoErr(err)                                             // email changed
	is.Equal(suffixRows(t, db, 1), "1:@d 1:c@d 1:d 3:Al 3:l") // the old suffixes gone
	_, err = db.ExecContext(ctx, `UPDATE subscribers SET data = '{}' WHERE seq = 1`)
	is.NoErr(err) // no indexed column changed
	is.Equal(suffixRows(t, db, 1), "1:@d 1:c@d 1:d 3:Al 3:l")

	long := strings.Repeat("a", 40)
	_, err = db.ExecContext(ctx, insert, 3, "id3", "s3", long, nil, nil, nil)
	is.NoErr(err) // nine suffixes of 40 a's cut to the same 32 characters: one row
	is.Equal(strings.Count(suffixRows(t, db, 3), " ")+1, 32)

	_, err = db.ExecContext(ctx, `DELETE FROM subscribers WHERE seq IN (1, 2, 3)`)
	is.NoErr(err)                                                         // deleted
	is.Equal(count(t, db, `SELECT count(*) FROM subscriber_suffixes`), 0) // nothing left behind
}
