package account_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/accounts/internal/account"
)

// A new address is unconfirmed; a person's unconfirmed address may be
// confirmed, once; an agent has no address to confirm. The refusals come
// in their documented order: no_account_address before
// email_already_confirmed.
func TestAnAddressIsConfirmedOnceAndOnlyAPersonsIs(t *testing.T) {
	a := person(t)
	require.True(t, a.EmailVerifiedAt.IsZero(), "a sign-up does not prove the address")
	require.NoError(t, a.CheckConfirmable())

	confirmed, err := a.ConfirmEmail(now.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, now.Add(time.Minute), confirmed.EmailVerifiedAt)
	require.True(t, a.EmailVerifiedAt.IsZero(), "the account it was given is unchanged")
	refusedWith(t, confirmed.CheckConfirmable(), account.CodeEmailAlreadyConfirmed)

	again, err := confirmed.ConfirmEmail(now.Add(time.Hour))
	require.NoError(t, err, "repeated after an interruption")
	require.Equal(t, now.Add(time.Minute), again.EmailVerifiedAt, "the first confirmation stands")

	refusedWith(t, agent(t).CheckConfirmable(), account.CodeNoAccountAddress)
	_, err = agent(t).ConfirmEmail(now)
	refusedWith(t, err, account.CodeNoAccountAddress)

	// An agent that somehow carries a confirmation is still no person.
	odd := agent(t)
	odd.EmailVerifiedAt = now
	refusedWith(t, odd.CheckConfirmable(), account.CodeNoAccountAddress) // no_account_address comes first
}

// A confirmation's codes are the sign-in codes: a code issued for one
// account verifies for that account only, once.
func TestAConfirmationCodeNamesItsAccount(t *testing.T) {
	c, err := account.IssueCode(account.EmailCode{}, "acct_p1", "123456", []byte("salt"), now)
	require.NoError(t, err)
	_, id, err := c.Verify("123456", now.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, "acct_p1", id)
}
