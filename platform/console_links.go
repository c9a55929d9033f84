package platform

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"net/http"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// LinkTTL is how long a setup link works (docs/console.md, "First run").
const LinkTTL = time.Hour

// ErrLinkUsed is a setup link that was used, has expired or never was.
var ErrLinkUsed = &Error{Status: http.StatusGone, Message: "This link has been used or has expired; ask an admin for a new one"}

// SetupLink returns a new token for the first admin's setup link, valid
// for LinkTTL and once, or "" when the team has a member already: then
// nothing but a member's sign-in opens the console. Each start without a
// member makes a new one; the older ones keep working until they expire.
func (a *Accounts) SetupLink(ctx context.Context) (token string, err error) {
	defer Wrap(&err, "make a setup link")
	if found, err := a.Any(ctx); err != nil || found {
		return "", err
	}
	return a.newLink(ctx, "")
}

// InviteLink returns a new token for member id's link to set their
// password, valid for LinkTTL and once; it replaces their earlier links.
func (a *Accounts) InviteLink(ctx context.Context, orgID, id string) (token string, err error) {
	defer Wrap(&err, "make a setup link for %s", id)
	if _, err := a.User(ctx, orgID, id); err != nil {
		return "", err
	}
	if _, err := a.db.ExecContext(ctx, `DELETE FROM console_links WHERE user_id = ?`, id); err != nil {
		return "", err
	}
	return a.newLink(ctx, id)
}

// newLink stores a new link's hash, and deletes the links that have
// expired.
func (a *Accounts) newLink(ctx context.Context, userID string) (string, error) {
	token := rand.Text()
	now := a.now()
	err := a.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM console_links WHERE expires_at <= ?`, sqldb.FormatTime(now)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO console_links (hash, user_id, created_at, expires_at) VALUES (?, NULLIF(?, ''), ?, ?)`,
			HashAPIKey(token), userID, sqldb.FormatTime(now), sqldb.FormatTime(now.Add(LinkTTL)))
		return err
	})
	return token, err
}

// LinkUser tells what a link is for without using it: the member whose
// password it sets, or, for the first admin's setup, a zero ConsoleUser.
// A used, expired or unknown link is ErrLinkUsed.
func (a *Accounts) LinkUser(ctx context.Context, token string) (ConsoleUser, error) {
	var userID sql.NullString
	err := a.db.QueryRowContext(ctx, `SELECT user_id FROM console_links WHERE hash = ? AND expires_at > ?`,
		HashAPIKey(token), sqldb.FormatTime(a.now())).Scan(&userID)
	if errors.Is(err, sql.ErrNoRows) {
		return ConsoleUser{}, ErrLinkUsed
	}
	if err != nil || !userID.Valid {
		return ConsoleUser{}, err
	}
	return scanUser(a.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM console_users WHERE id = ?`, userID.String))
}

// UseLink spends a link: the first admin's setup creates n as an admin
// (while the team is still empty), a member's sets their password to
// n.Password. The link works once, even when two requests spend it at
// once, and a failed rule leaves it unspent.
func (a *Accounts) UseLink(ctx context.Context, token string, n NewConsoleUser) (u ConsoleUser, err error) {
	defer Wrap(&err, "use a setup link")
	err = a.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := a.db.LockKey(ctx, tx, "console/links"); err != nil {
			return err
		}
		var userID sql.NullString
		err := tx.QueryRowContext(ctx, `DELETE FROM console_links WHERE hash = ? AND expires_at > ? RETURNING user_id`,
			HashAPIKey(token), sqldb.FormatTime(a.now())).Scan(&userID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLinkUsed
		}
		if err != nil {
			return err
		}
		if userID.Valid {
			if u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM console_users WHERE id = ?`, userID.String)); err != nil {
				return err
			}
			u.HasPassword, u.MustChangePassword = true, false
			return a.setPassword(ctx, tx, u, n.Password, false)
		}
		return a.setupAdmin(ctx, tx, n, &u)
	})
	return u, err
}

// setupAdmin creates the first admin, unless someone did already.
func (a *Accounts) setupAdmin(ctx context.Context, tx *sql.Tx, n NewConsoleUser, u *ConsoleUser) error {
	var members int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM console_users`).Scan(&members); err != nil {
		return err
	}
	if members > 0 {
		return ErrLinkUsed
	}
	n.Role, n.OneTime = RoleAdmin, false
	if n.Password == "" {
		return InvalidField("password", nil, "is required")
	}
	if err := n.check(); err != nil {
		return err
	}
	var orgID string
	if err := tx.QueryRowContext(ctx, `SELECT id FROM organizations ORDER BY created_at, id LIMIT 1`).Scan(&orgID); err != nil {
		return err
	}
	created, err := a.insert(ctx, tx, orgID, n)
	*u = created
	return err
}
