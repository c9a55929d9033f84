package platform_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// newAccounts returns the accounts of a fresh, bootstrapped database,
// whose clock the test moves.
func newAccounts(t *testing.T) (*platform.Accounts, string, *platformtest.Clock, *sqldb.DB) {
	t.Helper()
	db := sqldbtest.NewDB(t)
	if _, err := platform.Bootstrap(context.Background(), db, platform.BootstrapConfig{}, io.Discard); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	clock := platformtest.NewClock(time.Now())
	a := platform.NewAccounts(db, clock.Now)
	org, err := a.Organization(context.Background())
	if err != nil {
		t.Fatalf("organization: %v", err)
	}
	return a, org, clock, db
}

func statusOf(err error) int {
	var e *platform.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func TestPassword_Rules(t *testing.T) {
	for _, tc := range []struct {
		name, pw string
		ok       bool
	}{
		{"OK twelve characters", "abcdefghijkl", true},
		{"OK a passphrase with spaces", "correct horse battery", true},
		{"OK twelve letters of more than a byte", "ééééééééééé€", true},
		{"ErrEleven", "abcdefghijk", false},
		{"ErrEmpty", "", false},
		{"ErrOnlySpaces", "              ", false},
		{"ErrTheEmail", "ada@example.com", false},
		{"ErrTheEmailInCapitals", "ADA@EXAMPLE.COM", false},
		{"ErrPastOneKiB", strings.Repeat("a", 1025), false},
		{"ErrNotText", "abcdefghijkl\xff", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			problem := platform.PasswordProblem(tc.pw, "ada@example.com")
			is.Equal(problem == "", tc.ok) // the rule's verdict
		})
	}
}

func TestPassword_Hash(t *testing.T) {
	is := is.New(t)
	h := platform.HashPassword("correct horse battery")
	is.True(strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$"))  // argon2id, its parameters in the hash
	is.True(platform.CheckPasswordHash(h, "correct horse battery"))   // the right password matches
	is.True(!platform.CheckPasswordHash(h, "correct horse batterY"))  // a wrong one does not
	is.True(!platform.CheckPasswordHash("", "correct horse battery")) // no hash matches nothing
	is.True(h != platform.HashPassword("correct horse battery"))      // each hash has its own salt
	parts := strings.Split(h, "$")
	parts[3] = "m=8,t=1,p=1"
	is.True(!platform.CheckPasswordHash(strings.Join(parts, "$"), "correct horse battery")) // other parameters, another key
	is.True(!platform.CheckPasswordHash("$argon2id$v=19$m=x$y$z", "correct horse battery")) // an unreadable hash matches nothing
}

func TestAccounts_Create(t *testing.T) {
	a, org, _, _ := newAccounts(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		user   platform.NewConsoleUser
		status int      // 0 for created
		fields []string // the fields a 422 names
	}{
		{"OK", platform.NewConsoleUser{Email: "Ada@Example.com ", Name: "Ada", Role: platform.RoleAdmin, Password: "correct horse battery"}, 0, nil},
		{"OK without a password, for a setup link", platform.NewConsoleUser{Email: "bob@example.com", Name: "Bob", Role: platform.RoleViewer}, 0, nil},
		{"ErrTakenEmail", platform.NewConsoleUser{Email: "ada@example.com", Name: "Ada again", Role: platform.RoleViewer}, 409, nil},
		{"ErrEverything", platform.NewConsoleUser{Email: "not-an-email", Name: " ", Role: "owner", Password: "short"}, 422,
			[]string{"email", "name", "role", "password"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			u, err := a.Create(ctx, org, tc.user)
			is.Equal(statusOf(err), tc.status) // created, or refused as it should be
			if tc.status == 0 {
				is.NoErr(err)                                                  // created
				is.Equal(u.Email, strings.ToLower(strings.TrimSpace(u.Email))) // the email is kept lower-case
				is.Equal(u.HasPassword, tc.user.Password != "")                // a password only when given
			}
			var e *platform.Error
			if errors.As(err, &e) {
				for _, f := range tc.fields {
					_, named := e.Fields[f]
					is.True(named) // each broken rule names its field
				}
			}
		})
	}
	users, err := a.Users(ctx, org)
	is.New(t).NoErr(err)
	is.New(t).Equal(len(users), 2) // nothing refused was stored
}

func TestAccounts_LastAdminStays(t *testing.T) {
	is := is.New(t)
	a, org, _, _ := newAccounts(t)
	ctx := context.Background()
	ada, err := a.Create(ctx, org, platform.NewConsoleUser{Email: "ada@example.com", Name: "Ada", Role: platform.RoleAdmin, Password: "correct horse battery"})
	is.NoErr(err)
	_, err = a.SetRole(ctx, org, ada.ID, platform.RoleEditor)
	is.Equal(statusOf(err), 409) // the last admin keeps the role
	_, err = a.Remove(ctx, org, ada.Email)
	is.Equal(statusOf(err), 409) // nor can they be removed
	bob, err := a.Create(ctx, org, platform.NewConsoleUser{Email: "bob@example.com", Name: "Bob", Role: platform.RoleAdmin, Password: "correct horse battery"})
	is.NoErr(err)
	_, err = a.SetRole(ctx, org, ada.ID, platform.RoleViewer)
	is.NoErr(err) // with a second admin, the first may step down
	_, err = a.Remove(ctx, org, bob.ID)
	is.Equal(statusOf(err), 409) // and the second is now the last
}

func TestAccounts_Authenticate(t *testing.T) {
	is := is.New(t)
	a, org, _, _ := newAccounts(t)
	ctx := context.Background()
	_, err := a.Create(ctx, org, platform.NewConsoleUser{Email: "ada@example.com", Name: "Ada", Role: platform.RoleAdmin, Password: "correct horse battery"})
	is.NoErr(err)
	u, err := a.Authenticate(ctx, "ADA@example.com", "correct horse battery")
	is.NoErr(err)           // the email in any case, the right password
	is.Equal(u.Name, "Ada") // whose account it is
	_, err = a.Authenticate(ctx, "ada@example.com", "wrong horse battery")
	is.Equal(err, platform.ErrWrongPassword) // a wrong password
	_, err = a.Authenticate(ctx, "eve@example.com", "correct horse battery")
	is.Equal(err, platform.ErrWrongPassword) // an unknown email is refused in the same words
}

func TestSetupLink_OnceAndForAnHour(t *testing.T) {
	a, _, clock, _ := newAccounts(t)
	ctx := context.Background()
	admin := platform.NewConsoleUser{Email: "ada@example.com", Name: "Ada", Password: "correct horse battery"}

	t.Run("ErrExpired", func(t *testing.T) {
		is := is.New(t)
		token, err := a.SetupLink(ctx)
		is.NoErr(err)
		is.True(token != "") // an empty team gets a link
		clock.Advance(platform.LinkTTL + time.Second)
		_, err = a.LinkUser(ctx, token)
		is.True(errors.Is(err, platform.ErrLinkUsed)) // past the hour it opens nothing
		_, err = a.UseLink(ctx, token, admin)
		is.True(errors.Is(err, platform.ErrLinkUsed)) // nor can it be spent
	})
	t.Run("ErrBrokenRuleLeavesItUnspent", func(t *testing.T) {
		is := is.New(t)
		token, err := a.SetupLink(ctx)
		is.NoErr(err)
		_, err = a.UseLink(ctx, token, platform.NewConsoleUser{Email: "ada@example.com", Name: "Ada", Password: "short"})
		is.Equal(statusOf(err), 422) // a short password is refused
		_, err = a.LinkUser(ctx, token)
		is.NoErr(err) // and the link still works
	})
	t.Run("OK once, at once", func(t *testing.T) {
		is := is.New(t)
		token, err := a.SetupLink(ctx)
		is.NoErr(err)
		var wg sync.WaitGroup
		results := make([]error, 4)
		for i := range results {
			wg.Go(func() {
				n := admin
				n.Email = strings.Replace(admin.Email, "ada", "ada"+string(rune('a'+i)), 1)
				_, results[i] = a.UseLink(ctx, token, n)
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range results {
			if err == nil {
				ok++
			} else {
				is.True(errors.Is(err, platform.ErrLinkUsed)) // the others find it spent
			}
		}
		is.Equal(ok, 1) // one request spent it
		more, err := a.SetupLink(ctx)
		is.NoErr(err)
		is.Equal(more, "") // once the team has a member, no new setup link is made
	})
}

func TestInviteLink_SetsTheMembersPassword(t *testing.T) {
	is := is.New(t)
	a, org, _, _ := newAccounts(t)
	ctx := context.Background()
	bob, err := a.Create(ctx, org, platform.NewConsoleUser{Email: "bob@example.com", Name: "Bob", Role: platform.RoleEditor})
	is.NoErr(err)
	token, err := a.InviteLink(ctx, org, bob.ID)
	is.NoErr(err)
	u, err := a.LinkUser(ctx, token)
	is.NoErr(err)
	is.Equal(u.Email, "bob@example.com") // the link names its member
	_, err = a.UseLink(ctx, token, platform.NewConsoleUser{Password: "bob's own passphrase"})
	is.NoErr(err) // the member sets a password
	_, err = a.Authenticate(ctx, "bob@example.com", "bob's own passphrase")
	is.NoErr(err) // and signs in with it
	_, err = a.UseLink(ctx, token, platform.NewConsoleUser{Password: "someone else's passphrase"})
	is.True(errors.Is(err, platform.ErrLinkUsed)) // the link worked once
}

func TestAPIKey_LastUse(t *testing.T) {
	is := is.New(t)
	srv := platformtest.NewServer(t, nil)
	usedAt := func() map[string]string {
		keys, err := platform.ListAPIKeys(context.Background(), srv.App.DB)
		is.NoErr(err)
		out := map[string]string{}
		for _, k := range keys {
			out[k.Environment] = k.LastUsedAt
		}
		return out
	}
	is.Equal(usedAt()[platform.Development], "") // never used
	is.Equal(srv.Dev.Do(t, "GET", "/v1/environments", "").Status, 200)
	first := usedAt()
	is.True(first[platform.Development] != "") // used now
	is.Equal(first[platform.Production], "")   // the other key still never
	is.Equal(srv.Dev.Do(t, "GET", "/v1/environments", "").Status, 200)
	is.Equal(usedAt()[platform.Development], first[platform.Development]) // written at most once a minute
}
