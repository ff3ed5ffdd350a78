package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

func newAccount(t *testing.T, s *store.Accounts, id string) {
	t.Helper()
	a, err := account.RegisterAgent(id, "tenant-test", "sandbox", "partner-test",
		account.Registration{DisplayName: "Agent " + id}, time.Now().UTC().Truncate(time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, s.Create(context.Background(), a))
}

// addClient is a change that appends one client; the store does not
// check the domain's rules, so any number can be added.
func addClient(id string) func(account.Account) (account.Account, error) {
	return func(a account.Account) (account.Account, error) {
		a.Clients = append(append([]account.Client(nil), a.Clients...), account.Client{ID: id, AccountID: a.ID, SecretHash: "h"})
		return a, nil
	}
}

func clientIDs(a account.Account) map[string]bool {
	out := map[string]bool{}
	for _, c := range a.Clients {
		out[c.ID] = true
	}
	return out
}

// A writer that changed the account between another's read and write
// makes that write fail its compare and set; the other writer reads again
// and applies its change to the new state, so neither change is lost.
func TestModifyRetriesOnTheStateAnotherWriterLeft(t *testing.T) {
	ctx := context.Background()
	s := store.New(redistest.NewClient(t))
	newAccount(t, s, "acct_1")

	calls := 0
	got, err := s.Modify(ctx, "acct_1", func(a account.Account) (account.Account, error) {
		calls++
		if calls == 1 {
			// Another writer, between this one's read and its write.
			_, err := s.Modify(ctx, "acct_1", addClient("ocl_other"))
			require.NoError(t, err)
		}
		return addClient("ocl_mine")(a)
	})
	require.NoError(t, err)
	require.Equal(t, 2, calls, "the change is applied again to the state the other writer left")
	require.Equal(t, map[string]bool{"ocl_other": true, "ocl_mine": true}, clientIDs(got))

	stored, err := s.Get(ctx, "acct_1")
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"ocl_other": true, "ocl_mine": true}, clientIDs(stored.Account))
	require.EqualValues(t, 2, stored.Version)
}

// Two writers changing one account at once against redis-server: every
// change whose Modify returned nil is in the final record, none that
// returned ErrConflict is, and the version counts the successful ones.
func TestModifyLosesNoConcurrentWrite(t *testing.T) {
	ctx := context.Background()
	s := store.New(redistest.NewClient(t))
	newAccount(t, s, "acct_1")

	const writers, each = 2, 40
	var mu sync.Mutex
	applied, conflicted := map[string]bool{}, map[string]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("ocl_%d_%d", w, i)
				_, err := s.Modify(ctx, "acct_1", addClient(id))
				mu.Lock()
				switch {
				case err == nil:
					applied[id] = true
				case errors.Is(err, store.ErrConflict):
					conflicted[id] = true
				default:
					t.Errorf("modify %s: %v", id, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	stored, err := s.Get(ctx, "acct_1")
	require.NoError(t, err)
	require.Equal(t, applied, clientIDs(stored.Account), "exactly the acknowledged changes are stored (%d conflicted)", len(conflicted))
	require.EqualValues(t, len(applied), stored.Version)
	require.NotEmpty(t, applied)
}

// A refusal from the change stores nothing.
func TestModifyStoresNothingOnARefusal(t *testing.T) {
	ctx := context.Background()
	s := store.New(redistest.NewClient(t))
	newAccount(t, s, "acct_1")
	refused := errors.New("refused")
	_, err := s.Modify(ctx, "acct_1", func(a account.Account) (account.Account, error) {
		a.DisplayName = "changed"
		return a, refused
	})
	require.ErrorIs(t, err, refused)
	stored, err := s.Get(ctx, "acct_1")
	require.NoError(t, err)
	require.Equal(t, "Agent acct_1", stored.DisplayName)
	require.Zero(t, stored.Version)

	_, err = s.Modify(ctx, "acct_missing", addClient("ocl_x"))
	require.ErrorIs(t, err, store.ErrNotFound)
}
