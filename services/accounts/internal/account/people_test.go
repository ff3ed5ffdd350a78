package account_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/accounts/internal/account"
)

func passkey(id string) account.Passkey {
	return account.Passkey{CredentialID: []byte(id), PublicKey: []byte("cose key of " + id), AttestationType: "none", Transports: []string{"internal"}}
}

func person(t *testing.T) account.Account {
	t.Helper()
	a, err := account.NewPerson("acct_p1", "tenant-a", "sandbox", account.SignUp{DisplayName: "Ada Lovelace", Email: "  Ada@Example.COM "}, passkey("cred-1"), now)
	require.NoError(t, err)
	return a
}

func TestAPersonSignsUpWithANormalisedAddressAndAFirstPasskey(t *testing.T) {
	a := person(t)
	require.Equal(t, account.KindIndividual, a.Kind)
	require.Equal(t, account.StatusActive, a.Status)
	require.Equal(t, "ada@example.com", a.Email, "one account per mailbox, however it is spelt")
	require.True(t, a.EmailVerifiedAt.IsZero(), "a sign-up does not prove the address")
	require.Len(t, a.Passkeys, 1)
	require.Equal(t, now, a.Passkeys[0].CreatedAt)
	require.True(t, a.Passkeys[0].LastUsedAt.IsZero())
	require.Empty(t, a.OperatorPartnerID, "no partner operates a person")
	require.True(t, a.IsPerson())
	require.False(t, agent(t).IsPerson())
}

func TestSignUpRefusalsComeInTheirDocumentedOrder(t *testing.T) {
	for name, tc := range map[string]struct {
		signUp account.SignUp
		key    account.Passkey
		want   account.RefusalCode
	}{
		"no name, no address, no key (the name first)": {account.SignUp{Email: "nope"}, account.Passkey{}, account.CodeInvalidAccount},
		"a name with a leading space":                  {account.SignUp{DisplayName: " Ada", Email: "ada@example.com"}, passkey("c"), account.CodeInvalidAccount},
		"a name with a control character":              {account.SignUp{DisplayName: "Ada\x07", Email: "ada@example.com"}, passkey("c"), account.CodeInvalidAccount},
		"a bad address before a bad key":               {account.SignUp{DisplayName: "Ada", Email: "ada"}, account.Passkey{}, account.CodeInvalidEmail},
		"a key without a public key":                   {account.SignUp{DisplayName: "Ada", Email: "ada@example.com"}, account.Passkey{CredentialID: []byte("c")}, account.CodeInvalidPasskey},
		"a credential id over 1023 bytes":              {account.SignUp{DisplayName: "Ada", Email: "ada@example.com"}, account.Passkey{CredentialID: make([]byte, 1024), PublicKey: []byte("k")}, account.CodeInvalidPasskey},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := account.NewPerson("acct_p1", "tenant-a", "sandbox", tc.signUp, tc.key, now)
			refusedWith(t, err, tc.want)
		})
	}
}

func TestAnAddressIsOnePlainAddress(t *testing.T) {
	for _, ok := range []string{"ada@example.com", "a.b+tag@mail.example.co.uk", " ADA@EXAMPLE.COM\t"} {
		_, err := account.NormalizeEmail(ok)
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{"", "ada", "@example.com", "ada@", "ada@example", "ada@@example.com", "ada@exa@mple.com",
		"ada lovelace@example.com", "ada@example.com\r\nBcc: x@y.z", "<ada@example.com>", "ada@.example.com", "ada@example..com",
		"ada@example.com.", "\"ada\"@example.com", strings.Repeat("a", 65) + "@example.com", "a@" + strings.Repeat("b", 250) + ".com", "ada\x00@example.com"} {
		_, err := account.NormalizeEmail(bad)
		refusedWith(t, err, account.CodeInvalidEmail)
	}
}

func TestASignInMovesThePasskeysCounterOrIsRefused(t *testing.T) {
	a := person(t)
	later := now.Add(time.Minute)

	_, err := a.SignInWithPasskey(account.PasskeyUse{CredentialID: []byte("cred-other"), SignCount: 1}, later)
	refusedWith(t, err, account.CodePasskeyUnknown)
	_, err = agent(t).SignInWithPasskey(account.PasskeyUse{CredentialID: []byte("cred-1"), SignCount: 1}, later)
	refusedWith(t, err, account.CodePasskeyUnknown) // an agent signs in with no passkey

	b, err := a.SignInWithPasskey(account.PasskeyUse{CredentialID: []byte("cred-1"), SignCount: 0, BackupState: true}, later)
	require.NoError(t, err, "a passkey that keeps no counter says zero every time")
	require.Equal(t, later, b.Passkeys[0].LastUsedAt)
	require.True(t, b.Passkeys[0].BackupState)
	require.True(t, a.Passkeys[0].LastUsedAt.IsZero(), "the input is unchanged")
	b, err = b.SignInWithPasskey(account.PasskeyUse{CredentialID: []byte("cred-1")}, later)
	require.NoError(t, err)

	c, err := b.SignInWithPasskey(account.PasskeyUse{CredentialID: []byte("cred-1"), SignCount: 7}, later)
	require.NoError(t, err)
	require.EqualValues(t, 7, c.Passkeys[0].SignCount)
	for _, n := range []uint32{7, 3, 0} {
		_, err = c.SignInWithPasskey(account.PasskeyUse{CredentialID: []byte("cred-1"), SignCount: n}, later)
		refusedWith(t, err, account.CodePasskeyCounterRegressed)
	}
	_, err = c.SignInWithPasskey(account.PasskeyUse{CredentialID: []byte("cred-1"), SignCount: 8}, later)
	require.NoError(t, err)
}

// A code sign-in reaches only the account whose address it was asked
// for (the claim names only a confirmed address's account); one the
// claim named before its record was confirmed is confirmed by it.
func TestACodeSignInIsForTheAccountsOwnAddress(t *testing.T) {
	_, err := person(t).SignInWithCode("eve@example.com", now)
	refusedWith(t, err, account.CodeCodeWrong)
	_, err = agent(t).SignInWithCode("", now)
	refusedWith(t, err, account.CodeCodeWrong)

	a, err := person(t).SignInWithCode("ada@example.com", now.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, now.Add(time.Minute), a.EmailVerifiedAt, "an interrupted confirmation completed")
	a, err = a.SignInWithCode("ada@example.com", now.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, now.Add(time.Minute), a.EmailVerifiedAt, "the first proof stands")
}
