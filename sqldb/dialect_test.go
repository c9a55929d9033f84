package sqldb

import "testing"

func TestTranslate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT a FROM t WHERE b = ? AND c IN (?, ?)`, `SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)`},
		{`UPDATE t SET a = ?2 WHERE id = ?1`, `UPDATE t SET a = $2 WHERE id = $1`},
		{`SELECT '?', "a?" FROM t WHERE x = ?`, `SELECT '?', "a?" FROM t WHERE x = $1`},
		{`SELECT 'it''s ?' WHERE x = ?`, `SELECT 'it''s ?' WHERE x = $1`},
		{"SELECT 1 -- why?\nWHERE x = ?", "SELECT 1 -- why?\nWHERE x = $1"},
		{`SELECT * FROM jobs INDEXED BY jobs_claim WHERE a = ?`, `SELECT * FROM jobs INDEXED BY jobs_claim WHERE a = $1`},
	} {
		if got := translateText(tc.in); got != tc.want {
			t.Errorf("translate(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}
