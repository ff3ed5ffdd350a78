package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// at is now: the keys expire by the server's clock.
var at = time.Now().UTC().Truncate(time.Millisecond)

func newPerson(t *testing.T, id, env, email string) account.Account {
	t.Helper()
	a, err := account.NewPerson(id, "tenant-test", env, account.SignUp{DisplayName: "Person " + id, Email: email},
		account.Passkey{CredentialID: []byte{1, 2, 3, 0xff}, PublicKey: []byte{0xa5, 1, 2}, AttestationType: "none",
			AAGUID: make([]byte, 16), SignCount: 4, Transports: []string{"internal", "hybrid"}, BackupEligible: true}, at)
	require.NoError(t, err)
	return a
}

// A new person's address is unconfirmed and so not claimed: a second
// sign-up may give it too. Confirmed, it is the account's alone: a
// later sign-up with it is ErrEmailTaken and leaves no record behind. The
// person reads back as it was stored, passkeys and all; no key holds the
// address. Against a standalone server and a cluster.
func TestAnAddressIsClaimedOnlyByConfirmingIt(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s := store.New(rdb)
		first := newPerson(t, "acct_p1", "sandbox", "ada@example.com")
		require.NoError(t, s.CreatePerson(ctx, first))
		require.NoError(t, s.CreatePerson(ctx, newPerson(t, "acct_p2", "sandbox", "ada@example.com")), "an unconfirmed address is nobody's")
		id, err := s.AccountByEmail(ctx, "tenant-test", "sandbox", "ada@example.com")
		require.NoError(t, err)
		require.Empty(t, id, "no account holds an unconfirmed address")

		confirm(t, s, "sandbox", "ada@example.com", "acct_p1")
		id, err = s.AccountByEmail(ctx, "tenant-test", "sandbox", "ada@example.com")
		require.NoError(t, err)
		require.Equal(t, "acct_p1", id)

		err = s.CreatePerson(ctx, newPerson(t, "acct_p3", "sandbox", "ada@example.com"))
		require.ErrorIs(t, err, store.ErrEmailTaken)
		_, err = s.Get(ctx, "acct_p3")
		require.ErrorIs(t, err, store.ErrNotFound, "the refused account has no record")
		require.NoError(t, s.CreatePerson(ctx, newPerson(t, "acct_p4", "live", "ada@example.com")), "another environment is another address book")

		got, err := s.Get(ctx, "acct_p1")
		require.NoError(t, err)
		require.Empty(t, cmp.Diff(first, got.Account), "the store claims; the record's confirmation is the domain's act")
		require.Empty(t, redistest.Keys(t, rdb, "*ada@example.com*"), "no address is in a key")
	})
}

// confirm issues a confirmation code for the account and claims the
// address with it.
func confirm(t *testing.T, s *store.Accounts, env, email, accountID string) {
	t.Helper()
	ctx := context.Background()
	_, err := s.ModifyConfirmationCode(ctx, "tenant-test", env, email, accountID, issue("123456", accountID, at))
	require.NoError(t, err)
	require.NoError(t, s.ClaimEmail(ctx, "tenant-test", env, email, accountID, verifyFor("123456", at)))
}

func verifyFor(code string, now time.Time) func(account.EmailCode) (account.EmailCode, string, error) {
	return func(c account.EmailCode) (account.EmailCode, string, error) { return c.Verify(code, now) }
}

// Two accounts that gave one address confirm it at once, each with the
// right code of its own: exactly one holds the address; the other is
// ErrEmailTaken and changed nothing (its code still live, unspent), and
// stays refused afterwards. A wrong code's attempt is counted and claims
// nothing. Against a standalone server and a cluster, many times over.
func TestOfTwoAccountsConfirmingAnAddressExactlyOneHoldsIt(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s := store.New(rdb)
		for round := range 20 {
			email := fmt.Sprintf("race%d@example.com", round)
			ids := []string{fmt.Sprintf("acct_a%d", round), fmt.Sprintf("acct_b%d", round)}
			for _, id := range ids {
				require.NoError(t, s.CreatePerson(ctx, newPerson(t, id, "sandbox", email)))
				_, err := s.ModifyConfirmationCode(ctx, "tenant-test", "sandbox", email, id, issue("123456", id, at))
				require.NoError(t, err)
			}
			wrong := s.ClaimEmail(ctx, "tenant-test", "sandbox", email, ids[0], verifyFor("000000", at))
			require.ErrorIs(t, wrong, &account.RefusalError{Code: account.CodeCodeWrong})
			owner, err := s.AccountByEmail(ctx, "tenant-test", "sandbox", email)
			require.NoError(t, err)
			require.Empty(t, owner, "a wrong code claims nothing")

			errs := make([]error, 2)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, id := range ids {
				wg.Go(func() {
					<-start
					errs[i] = s.ClaimEmail(ctx, "tenant-test", "sandbox", email, id, verifyFor("123456", at))
				})
			}
			close(start)
			wg.Wait()

			owner, err = s.AccountByEmail(ctx, "tenant-test", "sandbox", email)
			require.NoError(t, err)
			winner, loser := 0, 1
			if owner == ids[1] {
				winner, loser = 1, 0
			}
			require.Equal(t, ids[winner], owner, "round %d: %v", round, errs)
			require.NoError(t, errs[winner])
			require.ErrorIs(t, errs[loser], store.ErrEmailTaken)

			before := redistest.State(t, rdb, nil, "pc:acct:*")
			require.ErrorIs(t, s.ClaimEmail(ctx, "tenant-test", "sandbox", email, ids[loser], verifyFor("123456", at)), store.ErrEmailTaken,
				"the loser's code is unspent and still claims nothing")
			require.Equal(t, before, redistest.State(t, rdb, nil, "pc:acct:*"), "a refused claim writes nothing")
			require.ErrorIs(t, s.ClaimEmail(ctx, "tenant-test", "sandbox", email, ids[winner], verifyFor("123456", at)),
				&account.RefusalError{Code: account.CodeCodeExpired}, "the winner's code is spent")
		}
	})
}

func issue(code string, accountID string, now time.Time) func(account.EmailCode) (account.EmailCode, error) {
	return func(c account.EmailCode) (account.EmailCode, error) {
		return account.IssueCode(c, accountID, code, []byte("salt-salt-salt-1"), now)
	}
}

func verify(code string, now time.Time) func(account.EmailCode) (account.EmailCode, error) {
	return func(c account.EmailCode) (account.EmailCode, error) {
		next, _, err := c.Verify(code, now)
		return next, err
	}
}

// A wrong code is refused and still counted; concurrent wrong attempts
// are each counted once (compare and set), so no more than five are ever
// heard; a refusal that changes nothing writes nothing; the record lives
// as long as its hour's count.
func TestEveryWrongAttemptIsCountedEvenConcurrently(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s := store.New(rdb)
		_, err := s.ModifyCode(ctx, "tenant-test", "sandbox", "ada@example.com", issue("123456", "acct_p1", at))
		require.NoError(t, err)

		var mu sync.Mutex
		outcomes := map[account.RefusalCode]int{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, err := s.ModifyCode(ctx, "tenant-test", "sandbox", "ada@example.com", verify("000000", at))
				var r *account.RefusalError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.As(err, &r):
					outcomes[r.Code]++
				case errors.Is(err, store.ErrConflict):
					outcomes["conflict"]++
				default:
					t.Errorf("verifying: %v", err)
				}
			})
		}
		wg.Wait()
		stored, err := s.ModifyCode(ctx, "tenant-test", "sandbox", "ada@example.com", func(c account.EmailCode) (account.EmailCode, error) { return c, nil })
		require.NoError(t, err)
		require.Equal(t, outcomes[account.CodeCodeWrong], stored.Attempts, "every refused attempt is in the record (%v)", outcomes)
		require.LessOrEqual(t, stored.Attempts, account.MaxCodeAttempts)
		require.Equal(t, 8, outcomes[account.CodeCodeWrong]+outcomes[account.CodeCodeAttemptsExhausted]+outcomes["conflict"])

		before := redistest.State(t, rdb, nil, "pc:acct:*")
		_, err = s.ModifyCode(ctx, "tenant-test", "sandbox", "ada@example.com", verify("12", at))
		require.ErrorIs(t, err, &account.RefusalError{Code: account.CodeCodeMalformed})
		require.Equal(t, before, redistest.State(t, rdb, nil, "pc:acct:*"), "a refusal that changes nothing writes nothing")

		keys := redistest.Keys(t, rdb, "pc:acct:*:code")
		require.Len(t, keys, 1)
		expiry, err := rdb.PExpireTime(ctx, keys[0]).Result()
		require.NoError(t, err)
		require.Equal(t, at.Add(account.CodeWindow).UnixMilli(), expiry.Milliseconds(), "kept until the hour's count ends")
	})
}

func TestTheRightCodeSignsInOnce(t *testing.T) {
	ctx := context.Background()
	s := store.New(redistest.NewClient(t))
	_, err := s.ModifyCode(ctx, "tenant-test", "sandbox", "ada@example.com", issue("123456", "acct_p1", at))
	require.NoError(t, err)
	var signedIn string
	_, err = s.ModifyCode(ctx, "tenant-test", "sandbox", "ada@example.com", func(c account.EmailCode) (account.EmailCode, error) {
		next, id, err := c.Verify("123456", at.Add(time.Minute))
		signedIn = id
		return next, err
	})
	require.NoError(t, err)
	require.Equal(t, "acct_p1", signedIn)
	_, err = s.ModifyCode(ctx, "tenant-test", "sandbox", "ada@example.com", verify("123456", at.Add(time.Minute)))
	require.ErrorIs(t, err, &account.RefusalError{Code: account.CodeCodeExpired}, "spent")
	_, err = s.ModifyCode(ctx, "tenant-test", "live", "ada@example.com", verify("123456", at.Add(time.Minute)))
	require.ErrorIs(t, err, &account.RefusalError{Code: account.CodeCodeExpired}, "another environment's address has no code")
}

// A ceremony's challenge is answered once: taking it removes it, and it
// expires on its own.
func TestACeremonyIsTakenOnce(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.New(rdb)
	c := store.Ceremony{Kind: store.CeremonySignUp, Tenant: "tenant-test", Environment: "sandbox", AccountID: "acct_p1",
		DisplayName: "Ada", Email: "ada@example.com", WebAuthn: []byte(`{"challenge":"abc"}`)}
	require.NoError(t, s.SaveCeremony(ctx, "hash-1", c, 5*time.Minute))
	ttl, err := rdb.PTTL(ctx, "pc:acct:ceremony:hash-1").Result()
	require.NoError(t, err)
	require.InDelta(t, (5 * time.Minute).Seconds(), ttl.Seconds(), 2)

	got, err := s.TakeCeremony(ctx, "hash-1")
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(c, got))
	_, err = s.TakeCeremony(ctx, "hash-1")
	require.ErrorIs(t, err, store.ErrCeremonyNotFound)
	_, err = s.TakeCeremony(ctx, "hash-never")
	require.ErrorIs(t, err, store.ErrCeremonyNotFound)
}
