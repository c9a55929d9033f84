package sqldb

import "context"

// AnalyzeGrown is analyzeGrown, for the tests of package sqldb_test.
func (db *DB) AnalyzeGrown(ctx context.Context) ([]string, error) { return db.analyzeGrown(ctx) }
