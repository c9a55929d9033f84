package workflows

import (
	"context"
	"database/sql"
	"errors"
	"net/http"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// Notification groups are the reference's older way to sort workflows:
// every workflow belongs to one. Each environment has its default group,
// General, which new workflows join unless they name another; it cannot be
// deleted. A group that live workflows belong to cannot be deleted either;
// workflows deleted earlier move to the default group when theirs goes
// (docs/workflows.md, "Notification groups").

// groupRequest is the body of POST and PATCH /v1/notification-groups.
type groupRequest struct {
	Name string `json:"name" validate:"required,max=256"`
}

// groupResponse is a notification group on the wire.
type groupResponse struct {
	ID             string `json:"_id"`
	Name           string `json:"name"`
	EnvironmentID  string `json:"_environmentId"`
	OrganizationID string `json:"_organizationId"`
}

const groupColumns = `id, name, environment_id, organization_id`

func scanGroup(row scanner) (groupResponse, error) {
	var g groupResponse
	err := row.Scan(&g.ID, &g.Name, &g.EnvironmentID, &g.OrganizationID)
	if errors.Is(err, sql.ErrNoRows) {
		return g, platform.ErrNotFound
	}
	return g, err
}

// groupNotFound is the 404 of a group path.
func groupNotFound(id string) error {
	return platform.NotFound("Notification group %s not found", id)
}

// findGroup reads the environment's group with _id id.
func findGroup(ctx context.Context, q querier, envID, id string) (groupResponse, error) {
	if !sqldb.IsID(id) {
		return groupResponse{}, platform.ErrNotFound
	}
	return scanGroup(q.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM notification_groups
		WHERE environment_id = ? AND id = ?`, envID, id))
}

// handleGroupList serves GET /v1/notification-groups: the environment's
// groups, oldest first (the default group, then those created later).
func handleGroupList(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) (err error) {
		defer platform.Wrap(&err, "list notification groups")
		ctx := r.Context()
		rows, err := store.db.QueryContext(ctx, `SELECT `+groupColumns+` FROM notification_groups
			WHERE environment_id = ? ORDER BY created_at, id`, platform.TenantFrom(ctx).EnvironmentID)
		if err != nil {
			return err
		}
		defer rows.Close()
		out := []groupResponse{}
		for rows.Next() {
			g, err := scanGroup(rows)
			if err != nil {
				return err
			}
			out = append(out, g)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

// handleGroupGet serves GET /v1/notification-groups/{id}.
func handleGroupGet(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		g, err := findGroup(r.Context(), store.db, platform.TenantFrom(r.Context()).EnvironmentID, id)
		if errors.Is(err, platform.ErrNotFound) {
			return groupNotFound(id)
		}
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, g)
	})
}

// handleGroupCreate serves POST /v1/notification-groups. A name the
// environment already has answers that group, as the reference does, so a
// client that creates its groups on every start gets the same ones.
func handleGroupCreate(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[groupRequest](r)
		if err != nil {
			return err
		}
		g, err := store.createGroup(r.Context(), platform.TenantFrom(r.Context()), req.Name)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, g)
	})
}

func (s *Store) createGroup(ctx context.Context, tenant platform.Tenant, name string) (g groupResponse, err error) {
	defer platform.Wrap(&err, "create notification group")
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO notification_groups (id, organization_id, environment_id, name, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (environment_id, name) DO NOTHING`,
			sqldb.NewIDAt(s.now()), tenant.OrganizationID, tenant.EnvironmentID, name, sqldb.FormatTime(s.now())); err != nil {
			return err
		}
		g, err = scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM notification_groups
			WHERE environment_id = ? AND name = ?`, tenant.EnvironmentID, name))
		return err
	})
	return g, err
}

// handleGroupUpdate serves PATCH /v1/notification-groups/{id}: a rename.
// A name another of the environment's groups has is a 409; the default
// group keeps its name, since new workflows find it by that name.
func handleGroupUpdate(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[groupRequest](r)
		if err != nil {
			return err
		}
		g, err := store.renameGroup(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("id"), req.Name)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, g)
	})
}

func (s *Store) renameGroup(ctx context.Context, envID, id, name string) (g groupResponse, err error) {
	defer s.changed()
	defer platform.Wrap(&err, "rename notification group %s", id)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if g, err = findGroup(ctx, tx, envID, id); errors.Is(err, platform.ErrNotFound) {
			return groupNotFound(id)
		} else if err != nil {
			return err
		}
		if g.Name == name {
			return nil
		}
		if g.Name == defaultGroupName {
			return platform.Conflict("The default notification group %s cannot be renamed", defaultGroupName)
		}
		_, err := tx.ExecContext(ctx, `UPDATE notification_groups SET name = ? WHERE id = ?`, name, id)
		if sqldb.IsUniqueViolation(err) {
			return platform.Conflict("A notification group named %q already exists", name)
		}
		g.Name = name
		return err
	})
	return g, err
}

// handleGroupDelete serves DELETE /v1/notification-groups/{id}, answered
// as the reference does: {acknowledged: true, status: "deleted"}.
func handleGroupDelete(store *Store) http.Handler {
	type deleted struct {
		Acknowledged bool   `json:"acknowledged"`
		Status       string `json:"status"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		if err := store.deleteGroup(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("id")); err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, deleted{Acknowledged: true, Status: "deleted"})
	})
}

func (s *Store) deleteGroup(ctx context.Context, envID, id string) (err error) {
	defer s.changed()
	defer platform.Wrap(&err, "delete notification group %s", id)
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, envID); err != nil {
			return err
		}
		g, err := findGroup(ctx, tx, envID, id)
		if errors.Is(err, platform.ErrNotFound) {
			return groupNotFound(id)
		}
		if err != nil {
			return err
		}
		if g.Name == defaultGroupName {
			return platform.Conflict("The default notification group %s cannot be deleted", defaultGroupName)
		}
		var live int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM workflows
			WHERE notification_group_id = ? AND deleted = 0`, id).Scan(&live); err != nil {
			return err
		}
		if live > 0 {
			return platform.Conflict("Notification group %s has %d workflows; move or delete them first", id, live)
		}
		def, err := s.defaultGroup(ctx, tx, g.OrganizationID, envID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE workflows SET notification_group_id = ?
			WHERE notification_group_id = ?`, def, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM notification_groups WHERE id = ?`, id)
		return err
	})
}

// placeInGroup checks the group a new or changed workflow names, or puts a
// workflow that names none in the environment's default group. A group the
// environment does not have is a 422 on notificationGroupId.
func (s *Store) placeInGroup(ctx context.Context, tx *sql.Tx, w *workflow) (err error) {
	if w.NotificationGroupID == "" {
		w.NotificationGroupID, err = s.defaultGroup(ctx, tx, w.OrganizationID, w.EnvironmentID)
		return err
	}
	_, err = findGroup(ctx, tx, w.EnvironmentID, w.NotificationGroupID)
	if errors.Is(err, platform.ErrNotFound) {
		return platform.InvalidField("notificationGroupId", w.NotificationGroupID, "no notification group of this environment has this _id")
	}
	return err
}
