package sqldb_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
)

// TestLeftOut checks that a value LeftOut stores reads back through
// LeftOutColumn, whether it was left out or kept.
func TestLeftOut(t *testing.T) {
	is := is.New(t)
	db := openFile(t, sqldb.MemoryPath)
	const common = `{"type":"none"}`
	for _, value := range []string{common, `{"type":"user"}`} {
		stored := sqldb.LeftOut(value, common)
		is.Equal(stored == "", value == common) // only the common value is left out
		var got string
		is.NoErr(db.QueryRowContext(context.Background(), `SELECT `+sqldb.LeftOutColumn("v", `'`+common+`'`)+` FROM (SELECT ? AS v)`, stored).Scan(&got))
		is.Equal(got, value) // read back
	}
}
