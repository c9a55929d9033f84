package workflows

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/templates"
)

// DefaultLocale is the locale a subscriber falls back to when no
// translation serves theirs (docs/content.md, "Translations").
const DefaultLocale = "en_US"

// localePattern is what a locale looks like: a language, and a region
// after an underscore or a hyphen (en, en_US, pt-BR).
var localePattern = regexp.MustCompile(`^[a-zA-Z]{2,3}(?:[_-][a-zA-Z0-9]{2,4})?$`)

// normalLocale writes a locale as translations are stored: the language in
// lower case, the region in upper case after an underscore. ok is false
// for something that is not a locale.
func normalLocale(s string) (string, bool) {
	if !localePattern.MatchString(s) {
		return "", false
	}
	lang, region, found := strings.Cut(strings.ReplaceAll(s, "-", "_"), "_")
	if !found {
		return strings.ToLower(lang), true
	}
	return strings.ToLower(lang) + "_" + strings.ToUpper(region), true
}

// translation is one locale of a resource's translations.
type translation struct {
	ResourceType, ResourceID, Locale string
	Content                          map[string]any
	CreatedAt, UpdatedAt             string
}

// resource finds the workflow or layout a translation belongs to, by
// workflowId, layoutId or _id, and returns its identifier and name.
func (s *Store) resource(ctx context.Context, q querier, envID, resourceType, key string) (id, name string, err error) {
	switch resourceType {
	case "workflow":
		w, err := find(ctx, q, envID, key)
		if errors.Is(err, platform.ErrNotFound) {
			return "", "", platform.NotFound("Workflow %q was not found", key)
		}
		if err != nil {
			return "", "", err
		}
		return w.WorkflowID, w.Name, nil
	case "layout":
		l, err := s.layout(ctx, q, envID, key)
		if err != nil {
			return "", "", err
		}
		return l.LayoutID, l.Name, nil
	}
	return "", "", platform.InvalidField("resourceType", resourceType, "must be one of workflow, layout")
}

// putTranslation creates or replaces the keys of a resource in a locale.
func (s *Store) putTranslation(ctx context.Context, tenant platform.Tenant, resourceType, key, locale string, content map[string]any) (tr *translation, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "put translation")
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, tenant.EnvironmentID); err != nil {
			return err
		}
		id, _, err := s.resource(ctx, tx, tenant.EnvironmentID, resourceType, key)
		if err != nil {
			return err
		}
		ts := sqldb.FormatTime(s.now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO translations (id, organization_id, environment_id, resource_type,
				resource_id, locale, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (environment_id, resource_type, resource_id, locale)
			DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
			sqldb.NewIDAt(s.now()), tenant.OrganizationID, tenant.EnvironmentID, resourceType, id, locale, string(raw), ts, ts); err != nil {
			return err
		}
		tr, err = translationOf(ctx, tx, tenant.EnvironmentID, resourceType, id, locale)
		return err
	})
	return tr, err
}

// translationOf reads one locale of a resource's translations.
func translationOf(ctx context.Context, q querier, envID, resourceType, id, locale string) (*translation, error) {
	tr := &translation{ResourceType: resourceType, ResourceID: id, Locale: locale}
	var content string
	err := q.QueryRowContext(ctx, `SELECT content, created_at, updated_at FROM translations
		WHERE environment_id = ? AND resource_type = ? AND resource_id = ? AND locale = ?`,
		envID, resourceType, id, locale).Scan(&content, &tr.CreatedAt, &tr.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, platform.NotFound("No %s translation of %s %q", locale, resourceType, id)
	}
	if err != nil {
		return nil, err
	}
	return tr, json.Unmarshal([]byte(content), &tr.Content)
}

// getTranslation reads one locale of the resource named by key.
func (s *Store) getTranslation(ctx context.Context, envID, resourceType, key, locale string) (*translation, error) {
	id, _, err := s.resource(ctx, s.db, envID, resourceType, key)
	if err != nil {
		return nil, err
	}
	return translationOf(ctx, s.db, envID, resourceType, id, locale)
}

// deleteTranslations deletes the resource's translations in locale, or in
// every locale when locale is "". Deleting none is a 404.
func (s *Store) deleteTranslations(ctx context.Context, tenant platform.Tenant, resourceType, key, locale string) (err error) {
	defer s.changed()
	defer platform.Wrap(&err, "delete translations")
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, tenant.EnvironmentID); err != nil {
			return err
		}
		id, _, err := s.resource(ctx, tx, tenant.EnvironmentID, resourceType, key)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM translations WHERE environment_id = ? AND resource_type = ?
			AND resource_id = ? AND (locale = ? OR ? = '')`, tenant.EnvironmentID, resourceType, id, locale, locale)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return platform.NotFound("No translations of %s %q", resourceType, id)
		}
		return nil
	})
}

// translationGroup is a resource's translations: the locales it has.
type translationGroup struct {
	ResourceID, ResourceType, ResourceName string
	Locales                                []string
	CreatedAt, UpdatedAt                   string
}

// group reads the locales of the resource named by key; a resource with
// none is a 404.
func (s *Store) group(ctx context.Context, envID, resourceType, key string) (*translationGroup, error) {
	id, name, err := s.resource(ctx, s.db, envID, resourceType, key)
	if err != nil {
		return nil, err
	}
	g := &translationGroup{ResourceID: id, ResourceType: resourceType, ResourceName: name, Locales: []string{}}
	rows, err := s.db.QueryContext(ctx, `SELECT locale, created_at, updated_at FROM translations
		WHERE environment_id = ? AND resource_type = ? AND resource_id = ? ORDER BY locale`, envID, resourceType, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var locale, created, updated string
		if err := rows.Scan(&locale, &created, &updated); err != nil {
			return nil, err
		}
		g.Locales = append(g.Locales, locale)
		if g.CreatedAt == "" || created < g.CreatedAt {
			g.CreatedAt = created
		}
		g.UpdatedAt = max(g.UpdatedAt, updated)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(g.Locales) == 0 {
		return nil, platform.NotFound("No translations of %s %q", resourceType, id)
	}
	return g, nil
}

// masterJSON returns the environment's translations in locale, each
// resource's keys under its identifier, workflows and layouts apart.
func (s *Store) masterJSON(ctx context.Context, envID, locale string) (workflows, layouts map[string]any, err error) {
	defer platform.Wrap(&err, "master json")
	workflows, layouts = map[string]any{}, map[string]any{}
	rows, err := s.db.QueryContext(ctx, `SELECT resource_type, resource_id, content FROM translations
		WHERE environment_id = ? AND locale = ? ORDER BY resource_type, resource_id`, envID, locale)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var typ, id, content string
		if err := rows.Scan(&typ, &id, &content); err != nil {
			return nil, nil, err
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(content), &v); err != nil {
			return nil, nil, err
		}
		if typ == "layout" {
			layouts[id] = v
		} else {
			workflows[id] = v
		}
	}
	return workflows, layouts, rows.Err()
}

// localeKeys are one resource's translations, flattened, by locale, and
// whether the resource has translations turned on.
type localeKeys struct {
	enabled bool
	locales map[string]map[string]string
}

// Translations returns the keys of a workflow's (resourceType "workflow")
// or a layout's ("layout") translations in the locale that best serves
// locale (pick), and whether the resource has translations turned on: when
// it has not, keys is nil. Answers are cached until the next write.
func (s *Store) Translations(ctx context.Context, environmentID, resourceType, resourceID, locale string) (keys map[string]string, enabled bool, err error) {
	defer platform.Wrap(&err, "translations of %s %s", resourceType, resourceID)
	lk, err := s.translations.Get(environmentID+"\x00"+resourceType+"\x00"+resourceID, func() (*localeKeys, error) {
		return s.loadLocaleKeys(ctx, environmentID, resourceType, resourceID)
	})
	if err != nil || !lk.enabled {
		return nil, false, err
	}
	return lk.locales[pick(lk.locales, locale)], true, nil
}

func (s *Store) loadLocaleKeys(ctx context.Context, envID, resourceType, resourceID string) (*localeKeys, error) {
	table, column, live := "workflows", "workflow_id", " AND deleted = 0"
	if resourceType == "layout" {
		table, column, live = "layouts", "layout_id", ""
	}
	lk := &localeKeys{locales: map[string]map[string]string{}}
	var on int
	err := s.db.QueryRowContext(ctx, `SELECT translation_enabled FROM `+table+` WHERE environment_id = ? AND `+column+` = ?`+live, envID, resourceID).Scan(&on)
	if errors.Is(err, sql.ErrNoRows) || err == nil && on == 0 {
		return lk, nil
	}
	if err != nil {
		return nil, err
	}
	lk.enabled = true
	rows, err := s.db.QueryContext(ctx, `SELECT locale, content FROM translations
		WHERE environment_id = ? AND resource_type = ? AND resource_id = ?`, envID, resourceType, resourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var locale, content string
		if err := rows.Scan(&locale, &content); err != nil {
			return nil, err
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(content), &v); err != nil {
			return nil, err
		}
		lk.locales[locale] = templates.FlattenKeys(v)
	}
	return lk, rows.Err()
}

// pick chooses which of the locales serves want: want itself, then its
// language alone (fr for fr_CA), then another region of its language, then
// DefaultLocale and its language; "" when none does.
func pick[V any](locales map[string]V, want string) string {
	want, _ = normalLocale(want)
	lang, _, _ := strings.Cut(want, "_")
	defLang, _, _ := strings.Cut(DefaultLocale, "_")
	for _, try := range []struct{ exact, lang string }{{want, lang}, {DefaultLocale, defLang}} {
		if try.exact == "" {
			continue
		}
		if _, ok := locales[try.exact]; ok {
			return try.exact
		}
		if _, ok := locales[try.lang]; ok {
			return try.lang
		}
		var same []string
		for l := range locales {
			if strings.HasPrefix(l, try.lang+"_") {
				same = append(same, l)
			}
		}
		if len(same) > 0 {
			slices.Sort(same)
			return same[0]
		}
	}
	return ""
}
