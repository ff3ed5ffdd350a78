package organizations_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/organization"
	"github.com/pcourt/pcourt/services/accounts/internal/organizations"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

var at = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func signedIn(a account.Account) people.SignedIn {
	return people.SignedIn{Account: a, Session: people.Session{AccountID: a.ID, Tenant: a.Tenant, Environment: a.Environment,
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}}
}

func personAccount(id, tenant, env string) account.Account {
	return account.Account{ID: id, Tenant: tenant, Environment: env, Kind: account.KindIndividual, DisplayName: id,
		Email: id + "@example.com", EmailVerifiedAt: at, Status: account.StatusActive}
}

// MayActFor is what the platform asks before a person acts for an
// organisation: a live session of the deployment whose person is a
// member, with the role.
func TestAPersonMayActForAnOrganisationOnlyAsItsMember(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.New(rdb)
	svc := organizations.New(organizations.Config{Tenant: "t1", Environment: "sandbox", PagesURL: "http://localhost"}, s, auth.NewStore(rdb, auth.DefaultStoreConfig()), nil,
		slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return at })
	ada, mallory := personAccount("acct_ada", "t1", "sandbox"), personAccount("acct_mallory", "t1", "sandbox")
	org, err := svc.Create(ctx, ada, "Analytical Engines")
	require.NoError(t, err)

	role, ok, err := svc.MayActFor(ctx, signedIn(ada), org.ID())
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, organization.RoleOwner, role)

	for name, in := range map[string]people.SignedIn{
		"a person who is no member": signedIn(mallory),
		"an ended session": func() people.SignedIn {
			in := signedIn(ada)
			in.Session.ExpiresAt = at
			return in
		}(),
		"a session of another tenant":      signedIn(personAccount("acct_ada", "t2", "sandbox")),
		"a session of another environment": signedIn(personAccount("acct_ada", "t1", "live")),
		"another account's session": func() people.SignedIn {
			in := signedIn(ada)
			in.Session.AccountID = mallory.ID
			return in
		}(),
		"no session": {},
	} {
		_, ok, err := svc.MayActFor(ctx, in, org.ID())
		require.NoError(t, err, name)
		require.False(t, ok, name)
	}
	_, ok, err = svc.MayActFor(ctx, signedIn(ada), "acct_nothing")
	require.NoError(t, err)
	require.False(t, ok, "no such organisation")
}
