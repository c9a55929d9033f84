package platform

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/sqldb"
)

// Role is what a member of the console's team may do (docs/console.md,
// "Roles"). Each role may do all that the one below it may.
type Role string

// The roles, from least to most.
const (
	RoleViewer Role = "viewer" // reads everything but secrets
	RoleEditor Role = "editor" // also changes workflows, subscribers, topics and preferences, and sends tests
	RoleAdmin  Role = "admin"  // also integrations, API keys, environments and the team
)

// Roles lists the roles from least to most, as forms offer them.
var Roles = []Role{RoleViewer, RoleEditor, RoleAdmin}

var roleRank = map[Role]int{RoleViewer: 1, RoleEditor: 2, RoleAdmin: 3}

// ParseRole reads a role's name.
func ParseRole(s string) (Role, bool) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	_, ok := roleRank[r]
	return r, ok
}

// Allows reports whether a member of role r may do what needs role need.
func (r Role) Allows(need Role) bool { return roleRank[r] > 0 && roleRank[r] >= roleRank[need] }

// ConsoleUser is a member of the console's team. Its password hash never
// leaves the package.
type ConsoleUser struct {
	ID, OrganizationID string
	Email, Name        string
	Role               Role
	HasPassword        bool // false until a setup link is followed
	MustChangePassword bool // signed in with a one-time password: the next page sets a new one
	CreatedAt          string
	UpdatedAt          string
}

// NewConsoleUser is what a member is created with. Password is "" for a
// member who sets it through a setup link; OneTime makes them change it at
// their first sign-in.
type NewConsoleUser struct {
	Email, Name string
	Role        Role
	Password    string
	OneTime     bool
}

// ErrWrongPassword is a sign-in whose email or password is wrong; which
// of the two is not said.
var ErrWrongPassword = &Error{Status: http.StatusUnauthorized, Message: "Wrong email or password"}

// Accounts keeps the console's team: its members, their sessions and
// their one-time links.
type Accounts struct {
	db  *sqldb.DB
	now func() time.Time
}

// NewAccounts returns the accounts kept in db; now is time.Now when nil.
func NewAccounts(db *sqldb.DB, now func() time.Time) *Accounts {
	if now == nil {
		now = time.Now
	}
	return &Accounts{db: db, now: now}
}

const userColumns = `id, organization_id, email, name, role, password_hash <> '', must_change = 1, created_at, updated_at`

func scanUser(row interface{ Scan(...any) error }) (ConsoleUser, error) {
	var u ConsoleUser
	err := row.Scan(&u.ID, &u.OrganizationID, &u.Email, &u.Name, &u.Role, &u.HasPassword, &u.MustChangePassword,
		&u.CreatedAt, &u.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	return u, err
}

// Organization returns the id of the organization the first start made,
// whose team the console's members are.
func (a *Accounts) Organization(ctx context.Context) (id string, err error) {
	err = a.db.QueryRowContext(ctx, `SELECT id FROM organizations ORDER BY created_at, id LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", errors.New("the database has no organization yet: start herald serve once to create it")
	}
	return id, err
}

// Any reports whether the team has a member: until it has, only a setup
// link opens the console.
func (a *Accounts) Any(ctx context.Context) (bool, error) {
	var n int
	err := a.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM console_users LIMIT 1) one`).Scan(&n)
	return n > 0, err
}

// Users returns the organization's members, by email.
func (a *Accounts) Users(ctx context.Context, orgID string) (out []ConsoleUser, err error) {
	defer Wrap(&err, "list console users")
	rows, err := a.db.QueryContext(ctx, `SELECT `+userColumns+` FROM console_users WHERE organization_id = ? ORDER BY email`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// User returns the member whose id or email is ref, or a 404.
func (a *Accounts) User(ctx context.Context, orgID, ref string) (ConsoleUser, error) {
	u, err := scanUser(a.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM console_users
		WHERE organization_id = ? AND (id = ? OR email = ?)`, orgID, ref, normalEmail(ref)))
	if errors.Is(err, ErrNotFound) {
		return u, NotFound("No member has the id or email %q", ref)
	}
	return u, err
}

// Create adds a member, or answers a 422 naming each field that breaks a
// rule, or a 409 for an email already in the team.
func (a *Accounts) Create(ctx context.Context, orgID string, n NewConsoleUser) (u ConsoleUser, err error) {
	defer Wrap(&err, "create console user")
	if err := n.check(); err != nil {
		return u, err
	}
	err = a.db.Tx(ctx, func(tx *sql.Tx) error {
		u, err = a.insert(ctx, tx, orgID, n)
		return err
	})
	return u, err
}

func (a *Accounts) insert(ctx context.Context, tx *sql.Tx, orgID string, n NewConsoleUser) (ConsoleUser, error) {
	ts := sqldb.FormatTime(a.now())
	u := ConsoleUser{ID: sqldb.NewIDAt(a.now()), OrganizationID: orgID, Email: normalEmail(n.Email),
		Name: strings.TrimSpace(n.Name), Role: n.Role, HasPassword: n.Password != "", MustChangePassword: n.OneTime,
		CreatedAt: ts, UpdatedAt: ts}
	hash := ""
	if n.Password != "" {
		hash = HashPassword(n.Password)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO console_users
		(id, organization_id, email, name, role, password_hash, must_change, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, u.ID, orgID, u.Email, u.Name, string(u.Role), hash, sqldb.Flag(n.OneTime), ts, ts)
	if sqldb.IsUniqueViolation(err) {
		return u, Conflict("A member with the email %s exists already", u.Email)
	}
	return u, err
}

// check applies the rules of a new member (docs/console.md, "Accounts").
func (n NewConsoleUser) check() error {
	fields := map[string]FieldError{}
	bad := func(field string, value any, msg string) {
		fields[field] = FieldError{Messages: []string{msg}, Value: value}
	}
	if p := EmailProblem(n.Email); p != "" {
		bad("email", n.Email, p)
	}
	if name := strings.TrimSpace(n.Name); name == "" || utf8.RuneCountInString(name) > 256 || !utf8.ValidString(name) {
		bad("name", n.Name, "must be 1 to 256 characters")
	}
	if _, ok := roleRank[n.Role]; !ok {
		bad("role", string(n.Role), "must be one of: viewer, editor, admin")
	}
	if n.Password != "" {
		if p := PasswordProblem(n.Password, n.Email); p != "" {
			bad("password", nil, p)
		}
	}
	if len(fields) > 0 {
		return Invalid(fields)
	}
	return nil
}

// EmailProblem says why s cannot be a member's email, or "": the check is
// loose (something, an @, a domain), since the address is a sign-in name
// and Herald sends it nothing.
func EmailProblem(s string) string {
	s = strings.TrimSpace(s)
	at := strings.LastIndexByte(s, '@')
	if len(s) > 320 || !utf8.ValidString(s) || strings.ContainsAny(s, " \t\r\n\x00") || at < 1 || at == len(s)-1 {
		return "must be an email address"
	}
	return ""
}

func normalEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// SetRole changes a member's role. The team's last admin keeps theirs: a
// team without an admin could not manage itself.
func (a *Accounts) SetRole(ctx context.Context, orgID, id string, role Role) (u ConsoleUser, err error) {
	defer Wrap(&err, "set role of console user %s", id)
	if _, ok := roleRank[role]; !ok {
		return u, InvalidField("role", string(role), "must be one of: viewer, editor, admin")
	}
	err = a.db.Tx(ctx, func(tx *sql.Tx) error {
		if u, err = a.lockedUser(ctx, tx, orgID, id); err != nil {
			return err
		}
		if u.Role == RoleAdmin && role != RoleAdmin {
			if err := lastAdmin(ctx, tx, orgID, "change the role of"); err != nil {
				return err
			}
		}
		u.Role, u.UpdatedAt = role, sqldb.FormatTime(a.now())
		_, err := tx.ExecContext(ctx, `UPDATE console_users SET role = ?, updated_at = ? WHERE id = ?`, string(role), u.UpdatedAt, u.ID)
		return err
	})
	return u, err
}

// SetPassword gives a member a new password and signs out every session
// they have; oneTime makes them choose another at their next sign-in.
func (a *Accounts) SetPassword(ctx context.Context, orgID, id, pw string, oneTime bool) (err error) {
	defer Wrap(&err, "set password of console user %s", id)
	return a.db.Tx(ctx, func(tx *sql.Tx) error {
		u, err := a.lockedUser(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		return a.setPassword(ctx, tx, u, pw, oneTime)
	})
}

func (a *Accounts) setPassword(ctx context.Context, tx *sql.Tx, u ConsoleUser, pw string, oneTime bool) error {
	if p := PasswordProblem(pw, u.Email); p != "" {
		return InvalidField("password", nil, "%s", p)
	}
	_, err := tx.ExecContext(ctx, `UPDATE console_users SET password_hash = ?, must_change = ?, updated_at = ? WHERE id = ?`,
		HashPassword(pw), sqldb.Flag(oneTime), sqldb.FormatTime(a.now()), u.ID)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE user_id = ?`, u.ID)
	return err
}

// Remove deletes a member with their sessions and links, which stop
// working at once on every instance. The team's last admin stays.
func (a *Accounts) Remove(ctx context.Context, orgID, id string) (u ConsoleUser, err error) {
	defer Wrap(&err, "remove console user %s", id)
	err = a.db.Tx(ctx, func(tx *sql.Tx) error {
		if u, err = a.lockedUser(ctx, tx, orgID, id); err != nil {
			return err
		}
		if u.Role == RoleAdmin {
			if err := lastAdmin(ctx, tx, orgID, "remove"); err != nil {
				return err
			}
		}
		for _, q := range []string{`DELETE FROM console_sessions WHERE user_id = ?`, `DELETE FROM console_links WHERE user_id = ?`,
			`DELETE FROM console_users WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, u.ID); err != nil {
				return err
			}
		}
		return nil
	})
	return u, err
}

// lockedUser reads the member id or email ref inside a write of the team,
// which takes turns with the others (so two admins cannot each demote the
// other at once).
func (a *Accounts) lockedUser(ctx context.Context, tx *sql.Tx, orgID, ref string) (ConsoleUser, error) {
	if err := a.db.LockKey(ctx, tx, "console/team/"+orgID); err != nil {
		return ConsoleUser{}, err
	}
	u, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM console_users
		WHERE organization_id = ? AND (id = ? OR email = ?)`, orgID, ref, normalEmail(ref)))
	if errors.Is(err, ErrNotFound) {
		return u, NotFound("No member has the id or email %q", ref)
	}
	return u, err
}

// lastAdmin refuses what would leave the organization without an admin.
func lastAdmin(ctx context.Context, tx *sql.Tx, orgID, doing string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM console_users WHERE organization_id = ? AND role = 'admin'`,
		orgID).Scan(&n); err != nil {
		return err
	}
	if n <= 1 {
		return Conflict("Cannot %s the team's last admin: make another member admin first", doing)
	}
	return nil
}

// Authenticate returns the member whose email and password these are, or
// ErrWrongPassword. It takes as long for an unknown email as for a known
// one.
func (a *Accounts) Authenticate(ctx context.Context, email, pw string) (ConsoleUser, error) {
	var hash string
	var u ConsoleUser
	err := a.db.QueryRowContext(ctx, `SELECT `+userColumns+`, password_hash FROM console_users WHERE email = ?
		ORDER BY created_at LIMIT 1`, normalEmail(email)).Scan(&u.ID, &u.OrganizationID, &u.Email, &u.Name, &u.Role,
		&u.HasPassword, &u.MustChangePassword, &u.CreatedAt, &u.UpdatedAt, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		CheckPasswordHash(dummyHash(), pw)
		return u, ErrWrongPassword
	}
	if err != nil {
		return u, fmt.Errorf("find console user: %w", err)
	}
	if !CheckPasswordHash(hash, pw) {
		return u, ErrWrongPassword
	}
	return u, nil
}
