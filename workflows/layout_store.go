package workflows

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/templates"
)

// layoutColumns is shared by every query that reads whole layouts.
const layoutColumns = `id, organization_id, environment_id, layout_id, name, is_default, translation_enabled,
	coalesce(body, ''), body IS NOT NULL, editor_type, updated_by, created_at, updated_at`

func scanLayout(row scanner) (*layout, error) {
	var l layout
	var body, editor string
	var hasBody bool
	err := row.Scan(&l.ID, &l.OrganizationID, &l.EnvironmentID, &l.LayoutID, &l.Name, &l.IsDefault,
		&l.IsTranslationEnabled, &body, &hasBody, &editor, &l.UpdatedBy, &l.CreatedAt, &l.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, platform.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if hasBody {
		l.Email = &layoutEmail{Body: body, EditorType: editor}
	}
	return &l, nil
}

// layout returns the environment's layout whose layoutId or _id is key, a
// layoutId match first.
func (s *Store) layout(ctx context.Context, q querier, envID, key string) (*layout, error) {
	l, err := scanLayout(q.QueryRowContext(ctx, `SELECT `+layoutColumns+` FROM layouts
		WHERE environment_id = ? AND (layout_id = ? OR id = ?) ORDER BY layout_id = ? DESC LIMIT 1`, envID, key, key, key))
	if errors.Is(err, platform.ErrNotFound) {
		return nil, platform.NotFound("Layout %q was not found", key)
	}
	return l, err
}

// defaultLayoutID is the layoutId of the layout every environment starts with.
const defaultLayoutID = "default-layout"

// seedLayout gives an environment without a default layout Herald's own
// (templates.DefaultLayout), so an email step that names none has one.
func (s *Store) seedLayout(ctx context.Context, tx *sql.Tx, env platform.Environment) error {
	ts := sqldb.FormatTime(s.now())
	_, err := tx.ExecContext(ctx, `INSERT INTO layouts (id, organization_id, environment_id, layout_id, name, is_default,
			translation_enabled, body, editor_type, updated_by, created_at, updated_at)
		SELECT ?, ?, ?, ?, 'Default layout', 1, 0, ?, 'html', '', ?, ?
		WHERE NOT EXISTS (SELECT 1 FROM layouts WHERE environment_id = ? AND is_default = 1)
		ON CONFLICT DO NOTHING`,
		sqldb.NewIDAt(s.now()), env.OrganizationID, env.ID, defaultLayoutID, templates.DefaultLayout, ts, ts, env.ID)
	return err
}

// insertLayout stores a new layout; the environment's first becomes its
// default.
func (s *Store) insertLayout(ctx context.Context, tx *sql.Tx, l *layout) error {
	if err := s.writing(ctx, tx, l.EnvironmentID); err != nil {
		return err
	}
	var defaults int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM layouts WHERE environment_id = ? AND is_default = 1`,
		l.EnvironmentID).Scan(&defaults); err != nil {
		return err
	}
	l.IsDefault = defaults == 0
	var body any
	editor := "html"
	if l.Email != nil {
		body, editor = l.Email.Body, l.Email.EditorType
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO layouts (id, organization_id, environment_id, layout_id, name, is_default,
			translation_enabled, body, editor_type, updated_by, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.OrganizationID, l.EnvironmentID, l.LayoutID, l.Name, sqldb.Flag(l.IsDefault),
		sqldb.Flag(l.IsTranslationEnabled), body, editor, l.UpdatedBy, l.CreatedAt, l.UpdatedAt)
	if sqldb.IsUniqueViolation(err) {
		return platform.Conflict("Layout with layoutId %q already exists", l.LayoutID)
	}
	return err
}

// newLayout is a layout of the tenant's environment, stamped now.
func (s *Store) newLayout(tenant platform.Tenant, layoutID, name string, translations bool) *layout {
	ts := sqldb.FormatTime(s.now())
	return &layout{ID: sqldb.NewIDAt(s.now()), OrganizationID: tenant.OrganizationID, EnvironmentID: tenant.EnvironmentID,
		LayoutID: layoutID, Name: name, IsTranslationEnabled: translations, UpdatedBy: tenant.UserID, CreatedAt: ts, UpdatedAt: ts}
}

// emptyBlockLayout is the body a new layout starts with, as the block
// editor opens it: a block document holding only the step's content, between
// two blank paragraphs, for the team to build its page around.
const emptyBlockLayout = `{"type":"doc","content":[` +
	`{"type":"paragraph","attrs":{"textAlign":null,"showIfKey":null},"content":[{"type":"text","text":" "}]},` +
	`{"type":"paragraph","attrs":{"textAlign":"left","showIfKey":null},"content":[{"type":"variable",` +
	`"attrs":{"id":"content","label":null,"fallback":null,"required":false,"aliasFor":null}}]},` +
	`{"type":"paragraph","attrs":{"textAlign":null,"showIfKey":null},"content":[{"type":"text","text":" "}]}]}`

// createLayout stores a new layout from req, its body an empty block
// document until an update gives it another.
func (s *Store) createLayout(ctx context.Context, tenant platform.Tenant, req layoutCreateRequest) (l *layout, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "create layout")
	l = s.newLayout(tenant, req.LayoutID, req.Name, req.IsTranslationEnabled)
	l.Email = &layoutEmail{Body: emptyBlockLayout, EditorType: "block"}
	return l, s.db.Tx(ctx, func(tx *sql.Tx) error { return s.insertLayout(ctx, tx, l) })
}

// duplicateLayout copies the layout named by key, body included, under a
// new name and layoutId (a slug of the name when req gives none).
func (s *Store) duplicateLayout(ctx context.Context, tenant platform.Tenant, key string, req layoutDuplicateRequest) (l *layout, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "duplicate layout %s", key)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		orig, err := s.layout(ctx, tx, tenant.EnvironmentID, key)
		if err != nil {
			return err
		}
		id := req.LayoutID
		if id == "" {
			id = slugify(req.Name, "layout") + "-" + shortSuffix()
		}
		l = s.newLayout(tenant, id, req.Name, req.IsTranslationEnabled)
		l.Email = orig.Email
		return s.insertLayout(ctx, tx, l)
	})
	return l, err
}

// updateLayout applies req to the layout named by key.
func (s *Store) updateLayout(ctx context.Context, tenant platform.Tenant, key string, req layoutUpdateRequest) (l *layout, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "update layout %s", key)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, tenant.EnvironmentID); err != nil {
			return err
		}
		if l, err = s.layout(ctx, tx, tenant.EnvironmentID, key); err != nil {
			return err
		}
		l.Name, l.IsTranslationEnabled = req.Name, req.IsTranslationEnabled
		if req.ControlValues.present {
			l.Email = req.ControlValues.Email
		}
		l.UpdatedBy, l.UpdatedAt = tenant.UserID, sqldb.FormatTime(s.now())
		var body any
		editor := "html"
		if l.Email != nil {
			body, editor = l.Email.Body, l.Email.EditorType
		}
		_, err := tx.ExecContext(ctx, `UPDATE layouts SET name = ?, translation_enabled = ?, body = ?, editor_type = ?,
			updated_by = ?, updated_at = ? WHERE id = ?`,
			l.Name, sqldb.Flag(l.IsTranslationEnabled), body, editor, l.UpdatedBy, l.UpdatedAt, l.ID)
		return err
	})
	return l, err
}

// deleteLayout deletes the layout named by key, unless it is the default
// or a workflow's email step names it (409, docs/content.md).
func (s *Store) deleteLayout(ctx context.Context, tenant platform.Tenant, key string) (err error) {
	defer s.changed()
	defer platform.Wrap(&err, "delete layout %s", key)
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, tenant.EnvironmentID); err != nil {
			return err
		}
		l, err := s.layout(ctx, tx, tenant.EnvironmentID, key)
		if err != nil {
			return err
		}
		if l.IsDefault {
			return platform.Conflict("Layout %q is being used as a default layout, it can not be deleted", l.LayoutID)
		}
		users, err := layoutUsers(ctx, tx, tenant.EnvironmentID, l.LayoutID)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			names := make([]string, len(users))
			for i, u := range users {
				names[i] = u.WorkflowID
			}
			return platform.Conflict("Layout %q is used by the workflows %s; remove it from their email steps first",
				l.LayoutID, strings.Join(names, ", "))
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM layouts WHERE id = ?`, l.ID)
		return err
	})
}

// layoutUsers returns the environment's live workflows with an email step
// whose layoutId is layoutID, by workflowId. Only workflows whose steps
// mention the layout are decoded.
func layoutUsers(ctx context.Context, q querier, envID, layoutID string) ([]WorkflowRef, error) {
	needle, _ := json.Marshal(layoutID)
	rows, err := q.QueryContext(ctx, `SELECT name, workflow_id, steps FROM workflows
		WHERE environment_id = ? AND deleted = 0 AND steps LIKE ? ESCAPE '\' ORDER BY workflow_id`,
		envID, "%"+sqldb.LikeEscaper.Replace(string(needle))+"%")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []WorkflowRef{}
	for rows.Next() {
		var ref WorkflowRef
		var steps string
		if err := rows.Scan(&ref.Name, &ref.WorkflowID, &steps); err != nil {
			return nil, err
		}
		var list []Step
		if err := json.Unmarshal([]byte(steps), &list); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(list, func(st Step) bool {
			id, _ := st.ControlValues["layoutId"].(string)
			return st.Type == "email" && id == layoutID
		}) {
			out = append(out, ref)
		}
	}
	return out, rows.Err()
}

// listLayouts returns a page of the environment's layouts and the count of
// all matches.
func (s *Store) listLayouts(ctx context.Context, envID string, f listFilter) (out []*layout, total int, err error) {
	defer platform.Wrap(&err, "list layouts")
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	where, args := "environment_id = ?", []any{envID}
	if f.query != "" {
		d := s.db.Dialect()
		where += " AND (" + d.Instr("lower(name)", "lower(?)") + " > 0 OR " + d.Instr("lower(layout_id)", "lower(?)") + " > 0)"
		args = append(args, f.query, f.query)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM layouts WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	dir := "ASC"
	if f.desc {
		dir = "DESC"
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+layoutColumns+` FROM layouts WHERE `+where+`
		ORDER BY `+f.orderBy+` `+dir+`, id `+dir+` LIMIT ? OFFSET ?`, append(args, f.limit, f.offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		l, err := scanLayout(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, l)
	}
	return out, total, rows.Err()
}

// EmailLayout is the layout an email step is sent inside: its body as HTML
// that still holds its Liquid and its {{content}} slot.
type EmailLayout struct {
	LayoutID           string
	HTML               string
	TranslationEnabled bool
}

// EmailLayout returns the environment's layout with layoutId, or its
// default when layoutID is ""; ok is false when there is no such layout or
// it has no body. Answers are cached until the next workflow or layout
// write, since every email delivery asks.
func (s *Store) EmailLayout(ctx context.Context, environmentID, layoutID string) (out EmailLayout, ok bool, err error) {
	defer platform.Wrap(&err, "email layout %q", layoutID)
	found, err := s.layouts.Get(environmentID+"\x00"+layoutID, func() (*EmailLayout, error) {
		cond, arg := "layout_id = ?", any(layoutID)
		if layoutID == "" {
			cond, arg = "is_default = ?", any(1)
		}
		l, err := scanLayout(s.db.QueryRowContext(ctx, `SELECT `+layoutColumns+` FROM layouts
			WHERE environment_id = ? AND `+cond, environmentID, arg))
		if errors.Is(err, platform.ErrNotFound) || err == nil && l.Email == nil {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		src, err := templates.LayoutSource(l.Email.Body, l.Email.EditorType)
		if err != nil {
			return nil, err
		}
		return &EmailLayout{LayoutID: l.LayoutID, HTML: src, TranslationEnabled: l.IsTranslationEnabled}, nil
	})
	if err != nil || found == nil {
		return EmailLayout{}, false, err
	}
	return *found, true, nil
}

// syncContent carries what a synced workflow renders with to the target
// environment: the layouts its email steps name, created or overwritten by
// layoutId (the target's default stays its default), and the translations
// of the workflow and of those layouts, which replace the target's.
func (s *Store) syncContent(ctx context.Context, tx *sql.Tx, tenant platform.Tenant, src *workflow, target platform.Environment) error {
	ts := sqldb.FormatTime(s.now())
	resources := [][2]string{{"workflow", src.WorkflowID}}
	for _, st := range src.Steps {
		id, _ := st.ControlValues["layoutId"].(string)
		if st.Type != "email" || id == "" || slices.Contains(resources, [2]string{"layout", id}) {
			continue
		}
		l, err := s.layout(ctx, tx, src.EnvironmentID, id)
		if errors.Is(err, platform.ErrNotFound) {
			continue // a step may name a layout that is gone: it is sent in the default
		}
		if err != nil {
			return err
		}
		var body any
		editor := "html"
		if l.Email != nil {
			body, editor = l.Email.Body, l.Email.EditorType
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO layouts (id, organization_id, environment_id, layout_id, name, is_default,
				translation_enabled, body, editor_type, updated_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (environment_id, layout_id) DO UPDATE SET name = excluded.name,
				translation_enabled = excluded.translation_enabled, body = excluded.body, editor_type = excluded.editor_type,
				updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
			sqldb.NewIDAt(s.now()), target.OrganizationID, target.ID, l.LayoutID, l.Name, sqldb.Flag(l.IsTranslationEnabled),
			body, editor, tenant.UserID, ts, ts); err != nil {
			return err
		}
		resources = append(resources, [2]string{"layout", id})
	}
	for _, r := range resources {
		if _, err := tx.ExecContext(ctx, `DELETE FROM translations WHERE environment_id = ? AND resource_type = ? AND resource_id = ?`,
			target.ID, r[0], r[1]); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT locale, content FROM translations
			WHERE environment_id = ? AND resource_type = ? AND resource_id = ?`, src.EnvironmentID, r[0], r[1])
		if err != nil {
			return err
		}
		var locales [][2]string
		for rows.Next() {
			var l [2]string
			if err := rows.Scan(&l[0], &l[1]); err != nil {
				rows.Close()
				return err
			}
			locales = append(locales, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, l := range locales {
			if _, err := tx.ExecContext(ctx, `INSERT INTO translations (id, organization_id, environment_id, resource_type,
					resource_id, locale, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				sqldb.NewIDAt(s.now()), target.OrganizationID, target.ID, r[0], r[1], l[0], l[1], ts, ts); err != nil {
				return err
			}
		}
	}
	return nil
}
