// People's accounts: an individual signs up with a display name, an
// e-mail address and a first passkey, and signs in with any of its
// passkeys (or with a code sent to the address, code.go). Adding and
// removing passkeys later is not built.

package account

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/refusal"
)

// The refusals of people's accounts, in the order the acts check them.
const (
	// CodeInvalidEmail: an e-mail address that is not one plain address.
	CodeInvalidEmail RefusalCode = "invalid_email"
	// CodeInvalidPasskey: a passkey without a credential id or public
	// key, or one whose id is longer than WebAuthn allows.
	CodeInvalidPasskey RefusalCode = "invalid_passkey"
	// CodePasskeyUnknown: a sign-in with a credential the account does not
	// hold, or for an account that is no person's.
	CodePasskeyUnknown RefusalCode = "passkey_unknown"
	// CodePasskeyCounterRegressed: the authenticator's signature counter
	// did not move past the last one seen: the credential may have been
	// copied, and the sign-in is refused.
	CodePasskeyCounterRegressed RefusalCode = "passkey_counter_regressed"
)

// StatusActive is a person's account: usable from its sign-up.
const StatusActive Status = "active"

// MaxCredentialIDBytes is WebAuthn's bound on a credential id (Level 3,
// section 5.1.3: at most 1023 bytes).
const MaxCredentialIDBytes = 1023

// MaxEmailBytes is an address's length bound (RFC 5321's path less its
// angle brackets).
const MaxEmailBytes = 254

// Passkey is a WebAuthn public-key credential a person registered: what
// the relying party must keep to verify the person's later assertions.
// It is plain data; the ceremonies themselves are the application's
// (go-webauthn), which fills it in.
type Passkey struct {
	// CredentialID is the authenticator's id of the credential.
	CredentialID []byte
	// PublicKey is the credential's public key, COSE-encoded.
	PublicKey []byte
	// AttestationType is the attestation format the authenticator gave
	// ("none" for most passkeys).
	AttestationType string
	// AAGUID names the authenticator's model, when it says.
	AAGUID []byte
	// SignCount is the last signature counter seen (0 for authenticators
	// that keep none, as synced passkeys do).
	SignCount uint32
	// Transports are the authenticator's transports ("internal", "usb",
	// "hybrid", …), as the browser reported them.
	Transports []string
	// BackupEligible and BackupState are the credential's backup flags:
	// eligible for syncing, and synced at its last use.
	BackupEligible bool
	BackupState    bool
	CreatedAt      time.Time
	LastUsedAt     time.Time // zero until the first sign-in with it
}

// SignUp is what a person gives to create an account.
type SignUp struct {
	DisplayName string
	Email       string
}

// Check validates a sign-up and returns it with its address normalised.
// Refusals, in order: invalid_account (the display name), invalid_email.
func (s SignUp) Check() (SignUp, error) {
	if !usableText(s.DisplayName) {
		return s, refusal.New(CodeInvalidAccount, "the display name must be 1 to 200 printable characters without leading or trailing spaces")
	}
	email, err := NormalizeEmail(s.Email)
	if err != nil {
		return s, err
	}
	s.Email = email
	return s, nil
}

// NormalizeEmail returns the address as accounts keep and look it up:
// without surrounding spaces, in lower case. Lower case because the
// address names the person to the platform: two spellings of one
// mailbox must not be two accounts, and the mail systems people use do
// not tell a local part's cases apart. An address is one plain
// addr-spec: a local part, an "@", a domain with a dot, no spaces,
// quotes, brackets or separators that could break out of a header or an
// SMTP command. Refusals: invalid_email.
func NormalizeEmail(s string) (string, error) {
	a := strings.ToLower(strings.TrimSpace(s))
	local, domain, ok := strings.Cut(a, "@")
	switch {
	case !ok || local == "" || domain == "" || len(a) > MaxEmailBytes || len(local) > 64:
	case strings.ContainsAny(a, " \t\r\n<>,;:\"()[]\\") || strings.Contains(domain, "@"):
	case !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.Contains(domain, ".."):
	case strings.IndexFunc(a, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
	default:
		return a, nil
	}
	return "", refusal.New(CodeInvalidEmail, "the e-mail address must be one plain address, like name@example.com")
}

func checkPasskey(p Passkey) error {
	if len(p.CredentialID) == 0 || len(p.CredentialID) > MaxCredentialIDBytes || len(p.PublicKey) == 0 {
		return refusal.New(CodeInvalidPasskey, "a passkey needs a credential id of 1 to %d bytes and a public key", MaxCredentialIDBytes)
	}
	return nil
}

// NewPerson returns a person's account, created with its first passkey,
// in a tenant and environment. Refusals, in order: invalid_account,
// invalid_email (SignUp.Check), invalid_passkey.
func NewPerson(id, tenant, env string, s SignUp, first Passkey, now time.Time) (Account, error) {
	s, err := s.Check()
	if err != nil {
		return Account{}, err
	}
	if err := checkPasskey(first); err != nil {
		return Account{}, err
	}
	first.CreatedAt, first.LastUsedAt = now, time.Time{}
	return Account{
		ID: id, Tenant: tenant, Environment: env, Kind: KindIndividual, DisplayName: s.DisplayName,
		Email: s.Email, Status: StatusActive, Passkeys: []Passkey{clonePasskey(first)}, CreatedAt: now,
	}, nil
}

// IsPerson reports whether the account is an individual's, which signs
// in with passkeys or codes.
func (a Account) IsPerson() bool { return a.Kind == KindIndividual }

// Passkey returns the account's passkey with the credential id.
func (a Account) Passkey(credentialID []byte) (Passkey, bool) {
	i := slices.IndexFunc(a.Passkeys, func(p Passkey) bool { return bytes.Equal(p.CredentialID, credentialID) })
	if i < 0 {
		return Passkey{}, false
	}
	return a.Passkeys[i], true
}

// PasskeyUse is what an assertion the application verified says of the
// credential: its signature counter and backup state.
type PasskeyUse struct {
	CredentialID []byte
	SignCount    uint32
	BackupState  bool
}

// SignInWithPasskey records a verified assertion of one of the account's
// passkeys: the counter and backup state it reported, and when. The
// counter must move past the last one seen unless both are zero
// (authenticators that keep no counter, synced passkeys among them,
// always say zero): a counter that did not means another copy of the key
// signed, and the sign-in is refused (WebAuthn Level 3, section 7.2, step
// 22). Refusals, in order: passkey_unknown (no person's account, or not
// its credential), passkey_counter_regressed.
func (a Account) SignInWithPasskey(u PasskeyUse, now time.Time) (Account, error) {
	if !a.IsPerson() {
		return a, refusal.New(CodePasskeyUnknown, "this passkey signs in to no account here")
	}
	i := slices.IndexFunc(a.Passkeys, func(p Passkey) bool { return bytes.Equal(p.CredentialID, u.CredentialID) })
	if i < 0 {
		return a, refusal.New(CodePasskeyUnknown, "this passkey signs in to no account here")
	}
	if stored := a.Passkeys[i].SignCount; (stored != 0 || u.SignCount != 0) && u.SignCount <= stored {
		return a, refusal.New(CodePasskeyCounterRegressed, "the passkey's signature counter went from %d to %d: another copy of it may exist, so it does not sign in", stored, u.SignCount)
	}
	a.Passkeys = slices.Clone(a.Passkeys)
	a.Passkeys[i].SignCount, a.Passkeys[i].BackupState, a.Passkeys[i].LastUsedAt = u.SignCount, u.BackupState, now
	return a, nil
}

// SignInWithCode records a sign-in by a code sent to email, the address
// the code was asked for. Only a confirmed address's code reaches an
// account (the address's claim names it from its confirmation on), so
// this refuses the address when it is not the account's; an account the
// claim names whose record missed its confirmation (the claim is written
// first, ConfirmEmail after) is confirmed now: the claim proves the
// address. Refusals: code_wrong (no person's account, or not its
// address: the answer an address without an account gets).
func (a Account) SignInWithCode(email string, now time.Time) (Account, error) {
	if !a.IsPerson() || a.Email != email {
		return a, refusal.New(CodeCodeWrong, "this is not the code that was sent")
	}
	if a.EmailVerifiedAt.IsZero() {
		a.EmailVerifiedAt = now
	}
	return a, nil
}

func clonePasskey(p Passkey) Passkey {
	p.CredentialID = slices.Clone(p.CredentialID)
	p.PublicKey = slices.Clone(p.PublicKey)
	p.AAGUID = slices.Clone(p.AAGUID)
	p.Transports = slices.Clone(p.Transports)
	return p
}
