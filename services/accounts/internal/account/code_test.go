package account_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/accounts/internal/account"
)

var salt = []byte("0123456789abcdef")

func issued(t *testing.T, accountID string) account.EmailCode {
	t.Helper()
	c, err := account.IssueCode(account.EmailCode{}, accountID, "123456", salt, now)
	require.NoError(t, err)
	return c
}

func TestACodeSignsInOnceWithinItsTenMinutes(t *testing.T) {
	c := issued(t, "acct_p1")
	require.True(t, c.Live(now))
	require.NotContains(t, c.Hash, "123456", "only the hash is kept")
	require.Equal(t, now.Add(10*time.Minute), c.ExpiresAt)
	require.Equal(t, now.Add(time.Hour), c.KeepUntil(), "the hour's count outlives the code")

	spent, accountID, err := c.Verify("123 456", now.Add(9*time.Minute))
	require.NoError(t, err)
	require.Equal(t, "acct_p1", accountID)
	require.False(t, spent.Live(now.Add(9*time.Minute)))
	_, _, err = spent.Verify("123456", now.Add(9*time.Minute))
	refusedWith(t, err, account.CodeCodeExpired) // used: it works once

	_, _, err = c.Verify("123456", now.Add(10*time.Minute))
	refusedWith(t, err, account.CodeCodeExpired)
	_, _, err = account.EmailCode{}.Verify("123456", now)
	refusedWith(t, err, account.CodeCodeExpired) // none was sent
}

func TestWrongCodesAreCountedAndTheFifthEndsTheCode(t *testing.T) {
	c := issued(t, "acct_p1")
	for i := 1; i <= account.MaxCodeAttempts; i++ {
		next, accountID, err := c.Verify("654321", now)
		refusedWith(t, err, account.CodeCodeWrong)
		require.Empty(t, accountID)
		require.Equal(t, i, next.Attempts, "the attempt is counted and must be kept")
		c = next
	}
	same, _, err := c.Verify("123456", now)
	refusedWith(t, err, account.CodeCodeAttemptsExhausted)
	require.Equal(t, c, same, "the right code after five wrong ones changes nothing")

	// The order: a malformed code counts nothing, before an expired one.
	for typed, want := range map[string]account.RefusalCode{"12345": account.CodeCodeMalformed, "1234567": account.CodeCodeMalformed, "12a456": account.CodeCodeMalformed, "": account.CodeCodeMalformed} {
		next, _, err := c.Verify(typed, now.Add(time.Hour))
		refusedWith(t, err, want)
		require.Equal(t, c, next)
	}
	expired, _, err := c.Verify("123456", now.Add(time.Hour))
	refusedWith(t, err, account.CodeCodeExpired) // before the exhausted attempts
	require.Equal(t, c, expired)
}

func TestTheCodeOfAnAddressWithoutAnAccountNeverSignsIn(t *testing.T) {
	c := issued(t, "")
	next, accountID, err := c.Verify("123456", now)
	refusedWith(t, err, account.CodeCodeWrong)
	require.Empty(t, accountID)
	require.Equal(t, 1, next.Attempts, "counted like any wrong code, so the answers are the same")
}

func TestCodesAreSentAtMostOnceAMinuteAndFiveTimesAnHour(t *testing.T) {
	c := issued(t, "acct_p1")
	_, err := account.IssueCode(c, "acct_p1", "222222", salt, now.Add(59*time.Second))
	refusedWith(t, err, account.CodeCodeTooSoon)
	_, err = account.IssueCode(c, "acct_p1", "22222", salt, now.Add(59*time.Second))
	refusedWith(t, err, account.CodeCodeMalformed) // the caller's mistake first

	at := now
	for i := 2; i <= account.MaxCodesPerHour; i++ {
		at = at.Add(time.Minute)
		next, err := account.IssueCode(c, "acct_p1", "222222", salt, at)
		require.NoError(t, err)
		require.Equal(t, i, next.Issued)
		require.Zero(t, next.Attempts, "a new code starts its own attempts")
		_, _, err = next.Verify("123456", at)
		refusedWith(t, err, account.CodeCodeWrong) // the new code replaced the old
		c = next
	}
	_, err = account.IssueCode(c, "acct_p1", "333333", salt, at.Add(time.Minute))
	refusedWith(t, err, account.CodeTooManyCodes)
	fresh, err := account.IssueCode(c, "acct_p1", "333333", salt, now.Add(time.Hour))
	require.NoError(t, err, "a new hour counts anew")
	require.Equal(t, 1, fresh.Issued)

	// A used code does not hold the next one back.
	spent, _, err := fresh.Verify("333333", now.Add(time.Hour))
	require.NoError(t, err)
	_, err = account.IssueCode(spent, "acct_p1", "444444", salt, now.Add(time.Hour+time.Second))
	require.NoError(t, err)
}
