package subscribers

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// rowQuerier is what both a pool and a transaction read one row through.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const contextColumns = `type, context_id, data, created_at, updated_at`

type rowScanner interface{ Scan(dest ...any) error }

func scanContext(row rowScanner) (Context, error) {
	var c Context
	var data string
	err := row.Scan(&c.Type, &c.ID, &data, &c.CreatedAt, &c.UpdatedAt)
	c.Data = json.RawMessage(data)
	return c, err
}

// context reads the environment's context with key type:id.
func (s *Store) context(ctx context.Context, q rowQuerier, envID, key string) (Context, error) {
	c, err := scanContext(q.QueryRowContext(ctx, `SELECT `+contextColumns+` FROM contexts
		WHERE environment_id = ? AND context_key = ?`, envID, key))
	if errors.Is(err, sql.ErrNoRows) {
		return c, platform.NotFound("Context %q was not found", key)
	}
	return c, err
}

// createContext stores a new context; 409 when its type:id exists.
func (s *Store) createContext(ctx context.Context, tenant platform.Tenant, typ, id string, data json.RawMessage) (c Context, err error) {
	defer platform.Wrap(&err, "create context")
	// A context read as absent is not cached, so no process holds an
	// answer this insert changes.
	ts := sqldb.FormatTime(s.now())
	c = Context{Type: typ, ID: id, Data: data, CreatedAt: ts, UpdatedAt: ts}
	_, err = s.db.ExecContext(ctx, `INSERT INTO contexts (id, organization_id, environment_id, context_key, type,
		context_id, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sqldb.NewIDAt(s.now()), tenant.OrganizationID, tenant.EnvironmentID, c.Key(), typ, id, string(data), ts, ts)
	if sqldb.IsUniqueViolation(err) {
		return c, platform.Conflict("Context %q already exists", c.Key())
	}
	return c, err
}

// updateContext replaces a context's data.
func (s *Store) updateContext(ctx context.Context, tenant platform.Tenant, key string, data json.RawMessage) (c Context, err error) {
	defer platform.Wrap(&err, "update context")
	defer s.contextsChanged(tenant.EnvironmentID, key)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE contexts SET data = ?, updated_at = ? WHERE environment_id = ? AND context_key = ?`,
			string(data), sqldb.FormatTime(s.now()), tenant.EnvironmentID, key)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return platform.NotFound("Context %q was not found", key)
		}
		if err := s.contextsWriting(ctx, tx, tenant.EnvironmentID, key); err != nil {
			return err
		}
		c, err = s.context(ctx, tx, tenant.EnvironmentID, key)
		return err
	})
	return c, err
}

// deleteContext deletes a context; the notifications sent on its behalf
// keep its key.
func (s *Store) deleteContext(ctx context.Context, tenant platform.Tenant, key string) (err error) {
	defer platform.Wrap(&err, "delete context")
	defer s.contextsChanged(tenant.EnvironmentID, key)
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM contexts WHERE environment_id = ? AND context_key = ?`, tenant.EnvironmentID, key)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return platform.NotFound("Context %q was not found", key)
		}
		return s.contextsWriting(ctx, tx, tenant.EnvironmentID, key)
	})
}

// contextsWriting tells the other processes sharing the database, when tx
// commits, to forget the environment's contexts with keys (type:id).
func (s *Store) contextsWriting(ctx context.Context, tx *sql.Tx, environmentID string, keys ...string) error {
	cacheKeys := make([]string, len(keys))
	for i, k := range keys {
		cacheKeys[i] = contextCacheKey(environmentID, k)
	}
	return cacheFor(s.db).contextsWritten.Changed(ctx, tx, cacheKeys...)
}

// contextsChanged ends every write of the environment's contexts with keys
// (deferred, so it runs after the commit): this process reads them again.
func (s *Store) contextsChanged(environmentID string, keys ...string) {
	c := cacheFor(s.db)
	for _, k := range keys {
		c.contexts.Forget(contextCacheKey(environmentID, k))
	}
}

// contextCacheKey names one context in the contexts cache.
func contextCacheKey(environmentID, key string) string {
	return environmentID + "\x00" + key
}

// contextFilter picks the contexts a list shows: of one type, of one id,
// of keys containing search; each when given.
type contextFilter struct{ typ, id, search string }

// contextPage reads a cursor page of the environment's contexts that f
// picks.
func (s *Store) contextPage(ctx context.Context, envID string, f contextFilter, p pageQuery) (page []Context, next, previous *cursor, total int, err error) {
	defer platform.Wrap(&err, "list contexts")
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	defer tx.Rollback()
	where, args := []string{"environment_id = ?"}, []any{envID}
	if f.typ != "" {
		where, args = append(where, "type = ?"), append(args, f.typ)
	}
	if f.id != "" {
		where, args = append(where, "context_id = ?"), append(args, f.id)
	}
	if f.search != "" {
		where, args = append(where, s.db.Dialect().Instr("lower(context_key)", "lower(?)")+" > 0"), append(args, f.search)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM contexts WHERE `+strings.Join(where, " AND ")+
		` LIMIT ?) AS m`, append(args, countCap)...).Scan(&total); err != nil {
		return nil, nil, nil, 0, err
	}
	col := sortColumn(p.orderBy)
	if col == "" {
		col = "id"
	}
	cond, cargs, tail := p.sql(col, "id")
	if cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, `+contextColumns+` FROM contexts WHERE `+strings.Join(where, " AND ")+tail, args...)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	defer rows.Close()
	type row struct {
		rowID string
		c     Context
	}
	var all []row
	for rows.Next() {
		var rw row
		var data string
		if err := rows.Scan(&rw.rowID, &rw.c.Type, &rw.c.ID, &data, &rw.c.CreatedAt, &rw.c.UpdatedAt); err != nil {
			return nil, nil, nil, 0, err
		}
		rw.c.Data = json.RawMessage(data)
		all = append(all, rw)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, 0, err
	}
	got, next, previous := window(p, all, func(rw row) cursor {
		c := cursor{OrderBy: p.orderBy, ID: rw.rowID}
		switch p.orderBy {
		case "createdAt":
			c.Value = rw.c.CreatedAt
		case "updatedAt":
			c.Value = rw.c.UpdatedAt
		}
		return c
	})
	page = make([]Context, len(got))
	for i, rw := range got {
		page[i] = rw.c
	}
	return page, next, previous, total, nil
}

// EnsureContexts creates the contexts a trigger names that the
// environment does not have yet, with the data the trigger gives; one that
// exists keeps its data, as the reference platform does. Which exist is
// read first, so a trigger naming known contexts, as most do, writes
// nothing and leaves the one writer to the trigger's own rows
// (BenchmarkTriggerContext).
func (s *Store) EnsureContexts(ctx context.Context, tenant platform.Tenant, refs []ContextRef) (err error) {
	defer platform.Wrap(&err, "ensure contexts")
	if len(refs) == 0 {
		return nil
	}
	keys := make([]string, len(refs))
	for i, r := range refs {
		keys[i] = r.Type + ":" + r.ID
	}
	have, err := s.Contexts(ctx, tenant.EnvironmentID, keys)
	if err != nil {
		return err
	}
	missing := refs[:0:0]
	for _, r := range refs {
		if !slices.ContainsFunc(have, func(c Context) bool { return c.Type == r.Type && c.ID == r.ID }) {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ts := sqldb.FormatTime(s.now())
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, r := range missing {
			data := r.Data
			if len(data) == 0 || string(data) == "null" {
				data = json.RawMessage(`{}`)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO contexts (id, organization_id, environment_id, context_key, type,
				context_id, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (environment_id, context_key) DO NOTHING`,
				sqldb.NewIDAt(s.now()), tenant.OrganizationID, tenant.EnvironmentID, r.Type+":"+r.ID, r.Type, r.ID, string(data), ts, ts); err != nil {
				return err
			}
		}
		return nil
	})
}

// Contexts returns the environment's contexts with the given type:id
// keys; keys it does not have are absent. Answers come from the contexts
// cache, which every write of a context through this package empties of
// it, here and, on PostgreSQL, in the other processes; a context that
// does not exist is not cached, so creating one needs no forgetting.
func (s *Store) Contexts(ctx context.Context, environmentID string, keys []string) (out []Context, err error) {
	defer platform.Wrap(&err, "read contexts")
	if len(keys) == 0 {
		return nil, nil
	}
	cacheKeys := make([]string, len(keys))
	for i, k := range keys {
		cacheKeys[i] = contextCacheKey(environmentID, k)
	}
	found, err := cacheFor(s.db).contexts.GetMany(cacheKeys, func(missing []string) (map[string]sqldb.Loaded[Context], error) {
		keys := make([]string, len(missing))
		for i, k := range missing {
			keys[i] = k[len(environmentID)+1:]
		}
		read, err := s.readContexts(ctx, environmentID, keys)
		if err != nil {
			return nil, err
		}
		loaded := make(map[string]sqldb.Loaded[Context], len(read))
		for _, c := range read {
			loaded[contextCacheKey(environmentID, c.Key())] = sqldb.Loaded[Context]{Value: c, Keep: true}
		}
		return loaded, nil
	})
	if err != nil {
		return nil, err
	}
	for _, k := range cacheKeys {
		if c, ok := found[k]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// readContexts reads the environment's contexts with the given type:id
// keys from the database.
func (s *Store) readContexts(ctx context.Context, environmentID string, keys []string) (out []Context, err error) {
	args := []any{environmentID}
	for _, k := range keys {
		args = append(args, k)
	}
	// Through a prepared statement: every trigger with a context and every
	// step it sends may read here, and a trigger names at most
	// MaxContextRefs, so there are few texts to keep prepared.
	rows, err := s.db.Query(ctx, `SELECT `+contextColumns+` FROM contexts
		WHERE environment_id = ? AND context_key IN (`+sqldb.Placeholders(len(keys))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanContext(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
