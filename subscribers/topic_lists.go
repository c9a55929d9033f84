package subscribers

import (
	"context"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// subscriptionPage reads a cursor page of a topic's subscriptions,
// optionally of one subscriberId, ordered by the subscription's creation.
func (s *Store) subscriptionPage(ctx context.Context, t Topic, subscriberID string, p pageQuery) (page []Subscription, next, previous *cursor, err error) {
	defer platform.Wrap(&err, "topic subscriptions")
	col := map[string]string{"_id": "ts.id", "createdAt": "ts.created_at", "updatedAt": "ts.created_at"}[p.orderBy]
	cond, args, tail := p.sql(col, "ts.id")
	where := []string{"ts.topic_id = ?"}
	args = append([]any{t.ID}, args...)
	if cond != "" {
		where = append(where, cond)
	}
	if subscriberID != "" {
		where, args = append(where, "ts.subscriber_id = ?"), append(args, subscriberID)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT ts.id, ts.subscriber_id, ts.created_at, `+prefixed("s.", subscriberColumns)+`
		FROM topic_subscribers ts JOIN subscribers s ON s.id = ts.subscriber_ref
		WHERE `+strings.Join(where, " AND ")+tail, args...)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	var all []Subscription
	for rows.Next() {
		sub := Subscription{Topic: t}
		if sub.Subscriber, err = s.scanSubscriber(prefixScanner{rows, []any{&sub.ID, &sub.SubscriberID, &sub.CreatedAt}}); err != nil {
			return nil, nil, nil, err
		}
		all = append(all, sub)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	page, next, previous = window(p, all, func(sub Subscription) cursor {
		c := cursor{OrderBy: p.orderBy, ID: sub.ID}
		if p.orderBy != "_id" {
			c.Value = sub.CreatedAt
		}
		return c
	})
	return page, next, previous, nil
}

// topicPage reads a cursor page of the environment's topics, filtered by a
// case-insensitive substring of key and of name.
func (s *Store) topicPage(ctx context.Context, environmentID, key, name string, p pageQuery) (page []Topic, next, previous *cursor, total int, err error) {
	defer platform.Wrap(&err, "list topics")
	// The count and the page read one snapshot.
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	defer tx.Rollback()
	where, args := []string{"environment_id = ?"}, []any{environmentID}
	d := s.db.Dialect()
	if key != "" {
		where, args = append(where, d.Instr("lower(key)", "lower(?)")+" > 0"), append(args, key)
	}
	if name != "" {
		where, args = append(where, d.Instr("lower(name)", "lower(?)")+" > 0"), append(args, name)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM topics WHERE `+strings.Join(where, " AND ")+
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
	rows, err := tx.QueryContext(ctx, `SELECT `+topicColumns+` FROM topics WHERE `+strings.Join(where, " AND ")+tail, args...)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	defer rows.Close()
	var all []Topic
	for rows.Next() {
		t, err := scanTopic(rows)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		all = append(all, *t)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, 0, err
	}
	page, next, previous = window(p, all, func(t Topic) cursor {
		c := cursor{OrderBy: p.orderBy, ID: t.ID}
		switch p.orderBy {
		case "createdAt":
			c.Value = t.CreatedAt
		case "updatedAt":
			c.Value = t.UpdatedAt
		}
		return c
	})
	return page, next, previous, total, nil
}

// topicListV1 reads a page of GET /v1/topics: key and name match exactly.
func (s *Store) topicListV1(ctx context.Context, environmentID, key, name string, page, size int) (out []Topic, total int, err error) {
	defer platform.Wrap(&err, "list topics")
	// The count and the page read one snapshot.
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	where, args := []string{"environment_id = ?"}, []any{environmentID}
	if key != "" {
		where, args = append(where, "key = ?"), append(args, key)
	}
	if name != "" {
		where, args = append(where, "name = ?"), append(args, name)
	}
	w := strings.Join(where, " AND ")
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM topics WHERE `+w, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+topicColumns+` FROM topics WHERE `+w+
		` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, size, page*size)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out = []Topic{}
	for rows.Next() {
		t, err := scanTopic(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, *t)
	}
	return out, total, rows.Err()
}

// prefixed puts prefix before every column of a column list.
func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// prefixScanner scans columns before a row's subscriber columns into extra.
type prefixScanner struct {
	row   scanner
	extra []any
}

func (p prefixScanner) Scan(dest ...any) error {
	return p.row.Scan(append(p.extra, dest...)...)
}
