// Package people is the application layer of people's accounts, between
// the hosted pages under /account (internal/httpapi) and the domain:
//
//	sign-up: BeginSignUp (the WebAuthn creation options, the ceremony kept
//	five minutes) → the browser creates a passkey → FinishSignUp (the
//	ceremony taken once, the attestation verified by go-webauthn, the
//	account created with its address unconfirmed, a session)
//	confirming the address, signed in: RequestConfirmation → the e-mail
//	→ ConfirmEmail (the code checked and the address claimed in one step)
//	sign-in: BeginSignIn (request options for any passkey: usernameless)
//	→ the browser signs → FinishSignIn (verified, the counter moved on, a
//	session); or RequestCode → the e-mail → SignInWithCode (a session)
//	then Session, on every page, and SignOut.
//
// Every act is for the deployment's one tenant and environment
// (Config.Tenant, Config.Environment): the hosted pages have no partner
// or credential to take them from, so a deployment decides whom its
// people sign up with, as the respondent's page takes its case's.
//
// The ceremonies use go-webauthn (github.com/go-webauthn/webauthn), the
// maintained Go implementation of WebAuthn Level 3 the accounts design
// names: it builds the options, parses the browser's answer and verifies
// challenge, origin, relying party, flags, attestation and signature;
// the decisions that are the platform's (one account per confirmed address,
// passkeys per account, counters, codes) are internal/account's.
package people

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/url"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// Config is what the acts need to know of the deployment.
type Config struct {
	// Tenant and Environment are whom every person of the deployment's
	// pages signs up and in with.
	Tenant      string
	Environment string
	// Origin is the pages' origin (webpage.Site.Origin), the one a
	// ceremony's answer must come from; its host is the relying party's
	// id, which a browser accepts only as a domain name (localhost
	// included), never an IP address.
	Origin string
	// RPName is the relying party's name the browser shows.
	RPName string
	// SessionTTL is how long a session lasts from its sign-in; it does not
	// slide.
	SessionTTL time.Duration
	// CodeURL is the page a code's e-mail sends the person to.
	CodeURL string
	// AccountURL is the account page, where a confirmation code is typed.
	AccountURL string
}

// CeremonyTTL is how long a ceremony waits for the browser's answer:
// the five minutes go-webauthn gives the browser, and no longer.
const CeremonyTTL = 5 * time.Minute

// CeremonyPrefix is the prefix of a ceremony cookie's value. A session's
// is libs/auth's (StartAccountSession).
const CeremonyPrefix = "pcac_"

// The ways a session signed in.
const (
	MethodPasskey = auth.SignInPasskey
	MethodCode    = auth.SignInCode
)

// Errors of the acts, beside the domain's refusals.
var (
	// ErrCeremonyExpired is a ceremony answer for which no ceremony of
	// this browser waits: it expired, was answered already (each is
	// answered once), was another kind, or never began.
	ErrCeremonyExpired = errors.New("no ceremony waits for this answer")
	// ErrCodesOff is a code asked of a deployment that sends no e-mail.
	ErrCodesOff = errors.New("this deployment sends no sign-in codes")
	// ErrEmailConfirmedElsewhere is a confirmation of an address another
	// account confirmed first, and so holds (a store.ErrEmailTaken).
	ErrEmailConfirmedElsewhere = fmt.Errorf("%w first", store.ErrEmailTaken)
	// ErrNotAMember is a session acting for an organisation the person is
	// not a member of (any more).
	ErrNotAMember = errors.New("the person is not a member of the organisation")
)

// VerificationError is a ceremony answer go-webauthn did not verify: a
// wrong challenge, origin or relying party, missing user verification,
// a bad signature or attestation. Detail is the library's statement of
// which, safe to show; Err keeps its debugging information for the log.
type VerificationError struct {
	Detail string
	Err    error
}

func (e *VerificationError) Error() string { return "passkey not verified: " + e.Detail }
func (e *VerificationError) Unwrap() error { return e.Err }

func verification(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		detail := pe.Details
		if detail == "" {
			detail = pe.Type
		}
		return &VerificationError{Detail: detail, Err: fmt.Errorf("%s: %s (%s): %w", pe.Type, pe.Details, pe.DevInfo, err)}
	}
	return &VerificationError{Detail: "the answer could not be read as a WebAuthn credential", Err: err}
}

// Mailer sends an e-mail (libs/mail's Sender).
type Mailer interface {
	Send(ctx context.Context, m mail.Message) error
}

// mailQueue bounds the codes waiting to be sent.
const mailQueue = 64

// Service runs the acts.
type Service struct {
	cfg      Config
	wa       *webauthn.WebAuthn
	accounts *store.Accounts
	// sessions keeps the account sessions, in libs/auth's credential
	// keyspace, where every service that takes them reads them.
	sessions *auth.Store
	mailer   Mailer
	mails    chan mail.Message
	logger   *slog.Logger
	now      func() time.Time
}

// New returns the service; a nil mailer means no codes are sent (the
// pages offer none). now nil means time.Now.
func New(cfg Config, accounts *store.Accounts, sessions *auth.Store, mailer Mailer, logger *slog.Logger, now func() time.Time) (*Service, error) {
	u, err := url.Parse(cfg.Origin)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("people: origin %q has no host", cfg.Origin)
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID: u.Hostname(), RPDisplayName: cfg.RPName, RPOrigins: []string{cfg.Origin},
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification: protocol.VerificationRequired,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: CeremonyTTL, TimeoutUVD: CeremonyTTL},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: CeremonyTTL, TimeoutUVD: CeremonyTTL},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("people: the relying party %s: %w", u.Hostname(), err)
	}
	if now == nil {
		now = time.Now
	}
	s := &Service{cfg: cfg, wa: wa, accounts: accounts, sessions: sessions, mailer: mailer, logger: logger, now: now}
	if mailer != nil {
		s.mails = make(chan mail.Message, mailQueue)
	}
	return s, nil
}

// SendsCodes reports whether the deployment sends sign-in codes.
func (s *Service) SendsCodes() bool { return s.mailer != nil }

func (s *Service) instant() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// Begun is a ceremony begun: the browser's options and the ceremony's
// cookie value, which its answer must come back with.
type Begun struct {
	Cookie string
	// Options is go-webauthn's JSON for the browser: {"publicKey": …},
	// the creation or request options with binary members in base64url.
	Options json.RawMessage
}

// SignedIn is a session: its cookie value (only its hash is kept) and
// what it signs in as.
type SignedIn struct {
	Cookie  string
	Session Session
	// Account is the person signed in.
	Account account.Account
	// ActingFor is the organisation the person acts for with this
	// session (its account id), "" when the person acts for themself.
	ActingFor string
}

// Session is a person's signed-in browser as the pages show it.
type Session struct {
	// AccountID, Tenant and Environment are whom the session signs in.
	AccountID   string
	Tenant      string
	Environment string
	// CSRF is the token every form of the session's pages carries
	// (auth.SessionCSRF of the cookie).
	CSRF string
	// Method is how the session signed in: MethodPasskey or MethodCode.
	Method    string
	CreatedAt time.Time
	ExpiresAt time.Time
}

func sessionOf(cookie string, cred auth.Credential) Session {
	return Session{AccountID: cred.AccountID, Tenant: cred.Tenant, Environment: string(cred.Environment),
		CSRF: auth.SessionCSRF(cookie), Method: cred.Label, CreatedAt: cred.CreatedAt, ExpiresAt: cred.ExpiresAt}
}

// user is an account, or an account to be, as go-webauthn sees it. The
// user handle is the account id: random, public, no one's personal data,
// and what the browser hands back at a usernameless sign-in.
type user struct{ a account.Account }

func (u user) WebAuthnID() []byte          { return []byte(u.a.ID) }
func (u user) WebAuthnName() string        { return u.a.Email }
func (u user) WebAuthnDisplayName() string { return u.a.DisplayName }
func (u user) WebAuthnCredentials() []webauthn.Credential {
	out := make([]webauthn.Credential, len(u.a.Passkeys))
	for i, p := range u.a.Passkeys {
		transports := make([]protocol.AuthenticatorTransport, len(p.Transports))
		for j, t := range p.Transports {
			transports[j] = protocol.AuthenticatorTransport(t)
		}
		out[i] = webauthn.Credential{ID: p.CredentialID, PublicKey: p.PublicKey, AttestationType: p.AttestationType, Transport: transports,
			Flags:         webauthn.CredentialFlags{UserPresent: true, UserVerified: true, BackupEligible: p.BackupEligible, BackupState: p.BackupState},
			Authenticator: webauthn.Authenticator{AAGUID: p.AAGUID, SignCount: p.SignCount}}
	}
	return out
}

// BeginSignUp checks a sign-up and begins the registration of its first
// passkey: a discoverable credential, with user verification. An address
// another account confirmed is refused here (store.ErrEmailTaken), before
// the person makes a passkey for nothing; an address only given, not
// confirmed, by another account is not: it is nobody's yet.
func (s *Service) BeginSignUp(ctx context.Context, su account.SignUp) (Begun, error) {
	su, err := su.Check()
	if err != nil {
		return Begun{}, err
	}
	taken, err := s.accounts.AccountByEmail(ctx, s.cfg.Tenant, s.cfg.Environment, su.Email)
	if err != nil {
		return Begun{}, err
	}
	if taken != "" {
		return Begun{}, store.ErrEmailTaken
	}
	pending := account.Account{ID: "acct_" + rand.Text(), DisplayName: su.DisplayName, Email: su.Email}
	creation, session, err := s.wa.BeginRegistration(user{pending})
	if err != nil {
		return Begun{}, fmt.Errorf("beginning a registration: %w", err)
	}
	return s.begin(ctx, creation, session, store.Ceremony{Kind: store.CeremonySignUp, AccountID: pending.ID,
		DisplayName: su.DisplayName, Email: su.Email})
}

// BeginSignIn begins a usernameless sign-in: any passkey of the
// deployment's relying party may answer, with user verification.
func (s *Service) BeginSignIn(ctx context.Context) (Begun, error) {
	assertion, session, err := s.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return Begun{}, fmt.Errorf("beginning a sign-in: %w", err)
	}
	return s.begin(ctx, assertion, session, store.Ceremony{Kind: store.CeremonySignIn})
}

func (s *Service) begin(ctx context.Context, options any, session *webauthn.SessionData, c store.Ceremony) (Begun, error) {
	opts, err := json.Marshal(options)
	if err != nil {
		return Begun{}, fmt.Errorf("encoding a ceremony's options: %w", err)
	}
	c.Tenant, c.Environment = s.cfg.Tenant, s.cfg.Environment
	if c.WebAuthn, err = json.Marshal(session); err != nil {
		return Begun{}, fmt.Errorf("encoding a ceremony: %w", err)
	}
	cookie := auth.NewToken(CeremonyPrefix)
	if err := s.accounts.SaveCeremony(ctx, auth.HashToken(cookie), c, CeremonyTTL); err != nil {
		return Begun{}, err
	}
	return Begun{Cookie: cookie, Options: opts}, nil
}

// take returns the ceremony of kind the cookie names, removing it: an
// answer is heard once, verified or not.
func (s *Service) take(ctx context.Context, cookie string, kind store.CeremonyKind) (store.Ceremony, webauthn.SessionData, error) {
	if cookie == "" {
		return store.Ceremony{}, webauthn.SessionData{}, ErrCeremonyExpired
	}
	c, err := s.accounts.TakeCeremony(ctx, auth.HashToken(cookie))
	if errors.Is(err, store.ErrCeremonyNotFound) {
		return store.Ceremony{}, webauthn.SessionData{}, ErrCeremonyExpired
	}
	if err != nil {
		return store.Ceremony{}, webauthn.SessionData{}, err
	}
	if c.Kind != kind || c.Tenant != s.cfg.Tenant || c.Environment != s.cfg.Environment {
		return store.Ceremony{}, webauthn.SessionData{}, ErrCeremonyExpired
	}
	var session webauthn.SessionData
	if err := json.Unmarshal(c.WebAuthn, &session); err != nil {
		return store.Ceremony{}, webauthn.SessionData{}, fmt.Errorf("decoding a ceremony: %w", err)
	}
	return c, session, nil
}

// FinishSignUp verifies the browser's new credential against the
// sign-up's ceremony and creates the account with it, and a session.
// previous is the session cookie the browser held, ended here: a sign-in
// always starts a session of its own.
func (s *Service) FinishSignUp(ctx context.Context, ceremony string, answer []byte, previous string) (SignedIn, error) {
	c, session, err := s.take(ctx, ceremony, store.CeremonySignUp)
	if err != nil {
		return SignedIn{}, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(answer)
	if err != nil {
		return SignedIn{}, verification(err)
	}
	pending := account.Account{ID: c.AccountID, DisplayName: c.DisplayName, Email: c.Email}
	cred, err := s.wa.CreateCredential(user{pending}, session, parsed)
	if err != nil {
		return SignedIn{}, verification(err)
	}
	transports := make([]string, len(cred.Transport))
	for i, t := range cred.Transport {
		transports[i] = string(t)
	}
	now := s.instant()
	a, err := account.NewPerson(c.AccountID, s.cfg.Tenant, s.cfg.Environment, account.SignUp{DisplayName: c.DisplayName, Email: c.Email},
		account.Passkey{CredentialID: cred.ID, PublicKey: cred.PublicKey, AttestationType: cred.AttestationType, AAGUID: cred.Authenticator.AAGUID,
			SignCount: cred.Authenticator.SignCount, Transports: transports, BackupEligible: cred.Flags.BackupEligible, BackupState: cred.Flags.BackupState}, now)
	if err != nil {
		return SignedIn{}, err
	}
	if err := s.accounts.CreatePerson(ctx, a); err != nil {
		return SignedIn{}, err
	}
	s.logger.InfoContext(ctx, "person signed up", "account_id", a.ID)
	return s.startSession(ctx, a, MethodPasskey, previous)
}

// FinishSignIn verifies the browser's assertion against the sign-in's
// ceremony, with the passkey of the account its user handle names, and
// starts a session for that account.
func (s *Service) FinishSignIn(ctx context.Context, ceremony string, answer []byte, previous string) (SignedIn, error) {
	_, session, err := s.take(ctx, ceremony, store.CeremonySignIn)
	if err != nil {
		return SignedIn{}, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(answer)
	if err != nil {
		return SignedIn{}, verification(err)
	}
	var found account.Account
	var lookup error
	_, _, err = s.wa.ValidatePasskeyLogin(func(_, userHandle []byte) (webauthn.User, error) {
		found, lookup = s.person(ctx, string(userHandle))
		if lookup != nil {
			return nil, lookup
		}
		return user{found}, nil
	}, session, parsed)
	switch {
	case errors.Is(lookup, store.ErrNotFound):
		return SignedIn{}, unknownPasskey
	case lookup != nil:
		return SignedIn{}, fmt.Errorf("looking up a passkey's account: %w", lookup)
	case err != nil:
		if _, held := found.Passkey(parsed.RawID); found.ID != "" && !held {
			return SignedIn{}, unknownPasskey
		}
		return SignedIn{}, verification(err)
	}
	flags := parsed.Response.AuthenticatorData.Flags
	use := account.PasskeyUse{CredentialID: parsed.RawID, SignCount: parsed.Response.AuthenticatorData.Counter, BackupState: flags.HasBackupState()}
	a, err := s.accounts.Modify(ctx, found.ID, func(a account.Account) (account.Account, error) {
		return a.SignInWithPasskey(use, s.instant())
	})
	if errors.Is(err, &account.RefusalError{Code: account.CodePasskeyCounterRegressed}) {
		// A copy of the key may be in someone else's hands: worth a look.
		s.logger.WarnContext(ctx, "passkey sign-in refused: its counter went back", "account_id", found.ID)
	}
	if err != nil {
		return SignedIn{}, err
	}
	s.logger.InfoContext(ctx, "person signed in with a passkey", "account_id", a.ID)
	return s.startSession(ctx, a, MethodPasskey, previous)
}

// unknownPasskey is an assertion whose user handle names no person of
// the deployment, or whose credential that person does not hold (one
// removed, or of another relying party's account): the domain's refusal,
// as SignInWithPasskey words it.
var unknownPasskey = &account.RefusalError{Code: account.CodePasskeyUnknown, Detail: "this passkey signs in to no account here"}

// person loads a person's account of the deployment's tenant and
// environment; any other account is not found.
func (s *Service) person(ctx context.Context, id string) (account.Account, error) {
	if id == "" {
		return account.Account{}, store.ErrNotFound
	}
	a, err := s.accounts.Get(ctx, id)
	if err != nil {
		return account.Account{}, err
	}
	if !a.IsPerson() || a.Tenant != s.cfg.Tenant || a.Environment != s.cfg.Environment {
		return account.Account{}, store.ErrNotFound
	}
	return a.Account, nil
}

// RequestCode sends a sign-in code to an address, if an account confirmed
// it (an unconfirmed address reaches no account: its code is the one of
// an address without any). Whether one did changes nothing the caller sees: a code is issued and
// kept either way (the one for an address no account uses is never sent
// and never matches), the same refusals apply, and the e-mail is queued
// for a worker (RunMail), so no answer waits for an SMTP server only
// when the address is an account's.
func (s *Service) RequestCode(ctx context.Context, email string) error {
	if !s.SendsCodes() {
		return ErrCodesOff
	}
	email, err := account.NormalizeEmail(email)
	if err != nil {
		return err
	}
	accountID, err := s.accounts.AccountByEmail(ctx, s.cfg.Tenant, s.cfg.Environment, email)
	if err != nil {
		return err
	}
	code, salt := newCode(), make([]byte, 16)
	_, _ = rand.Read(salt)
	if _, err := s.accounts.ModifyCode(ctx, s.cfg.Tenant, s.cfg.Environment, email, func(c account.EmailCode) (account.EmailCode, error) {
		return account.IssueCode(c, accountID, code, salt, s.instant())
	}); err != nil {
		return err
	}
	if accountID == "" {
		return nil
	}
	select {
	case s.mails <- codeMessage(email, code, s.cfg.CodeURL):
	default:
		// Answered as if sent: an error here would be an account's alone.
		// The person asks again in a minute.
		s.logger.WarnContext(ctx, "sign-in code not sent: the e-mail queue is full", "account_id", accountID)
	}
	return nil
}

// newCode returns six random decimal digits.
func newCode() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return fmt.Sprintf("%06d", n.Int64())
}

func codeMessage(to, code, pageURL string) mail.Message {
	return mail.Message{To: to, Subject: "Your pcourt sign-in code",
		Body: "Your sign-in code is " + code + ".\n\n" +
			"Type it on the page where you asked for it (" + pageURL + "). It works once, for 10 minutes.\n\n" +
			"If you did not ask for a code, ignore this e-mail: nobody signs in without the code.\n"}
}

// RunMail sends the queued code e-mails until ctx ends; a code whose
// e-mail fails is logged, and the person asks again.
func (s *Service) RunMail(ctx context.Context) error {
	if s.mails == nil {
		<-ctx.Done()
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-s.mails:
			if err := s.mailer.Send(ctx, m); err != nil {
				s.logger.ErrorContext(ctx, "code e-mail failed", "err", err)
			}
		}
	}
}

// RequestConfirmation sends a code confirming the signed-in account's
// address to it, with the sign-in codes' rules and rationing (per
// address and account). Refusals: CheckConfirmable's, store.ErrEmailTaken
// (another account confirmed the address), IssueCode's; ErrCodesOff
// where no e-mail is sent.
func (s *Service) RequestConfirmation(ctx context.Context, accountID string) error {
	if !s.SendsCodes() {
		return ErrCodesOff
	}
	a, err := s.person(ctx, accountID)
	if err != nil {
		return err
	}
	if err := a.CheckConfirmable(); err != nil {
		return err
	}
	owner, err := s.accounts.AccountByEmail(ctx, s.cfg.Tenant, s.cfg.Environment, a.Email)
	if err != nil {
		return err
	}
	switch owner {
	case "":
	case a.ID:
		// Claimed, its record not yet confirmed (an interrupted
		// confirmation): complete it.
		if _, err := s.accounts.Modify(ctx, a.ID, func(a account.Account) (account.Account, error) { return a.ConfirmEmail(s.instant()) }); err != nil {
			return err
		}
		return &account.RefusalError{Code: account.CodeEmailAlreadyConfirmed, Detail: "the address " + a.Email + " is confirmed already"}
	default:
		return ErrEmailConfirmedElsewhere
	}
	code, salt := newCode(), make([]byte, 16)
	_, _ = rand.Read(salt)
	if _, err := s.accounts.ModifyConfirmationCode(ctx, s.cfg.Tenant, s.cfg.Environment, a.Email, a.ID, func(c account.EmailCode) (account.EmailCode, error) {
		return account.IssueCode(c, a.ID, code, salt, s.instant())
	}); err != nil {
		return err
	}
	select {
	case s.mails <- confirmationMessage(a.Email, code, s.cfg.AccountURL):
	default:
		s.logger.WarnContext(ctx, "confirmation code not sent: the e-mail queue is full", "account_id", a.ID)
	}
	return nil
}

// ConfirmEmail checks a code typed to confirm the signed-in account's
// address and, if it is the one sent, confirms the address and claims
// it: the code's use and the claim are one step (store.ClaimEmail), so
// of two accounts confirming one address exactly one holds it, and the
// other is refused with nothing changed. Refusals: CheckConfirmable's,
// Verify's (a wrong code counted), store.ErrEmailTaken.
func (s *Service) ConfirmEmail(ctx context.Context, accountID, code string) (account.Account, error) {
	a, err := s.person(ctx, accountID)
	if err != nil {
		return account.Account{}, err
	}
	if err := a.CheckConfirmable(); err != nil {
		return account.Account{}, err
	}
	if err := s.accounts.ClaimEmail(ctx, s.cfg.Tenant, s.cfg.Environment, a.Email, a.ID, func(c account.EmailCode) (account.EmailCode, string, error) {
		return c.Verify(code, s.instant())
	}); errors.Is(err, store.ErrEmailTaken) {
		return account.Account{}, ErrEmailConfirmedElsewhere
	} else if err != nil {
		return account.Account{}, err
	}
	a, err = s.accounts.Modify(ctx, a.ID, func(a account.Account) (account.Account, error) { return a.ConfirmEmail(s.instant()) })
	if err != nil {
		return account.Account{}, err
	}
	s.logger.InfoContext(ctx, "person confirmed the address", "account_id", a.ID)
	return a, nil
}

func confirmationMessage(to, code, pageURL string) mail.Message {
	return mail.Message{To: to, Subject: "Confirm your pcourt address",
		Body: "Your confirmation code is " + code + ".\n\n" +
			"Type it on your account page (" + pageURL + ") to confirm that this address is yours. It works once, for 10 minutes.\n\n" +
			"If you did not create a pcourt account with this address, ignore this e-mail: without the code nobody confirms it.\n"}
}

// SignInWithCode checks a typed code for an address and starts a session
// for the account it was sent for; a wrong one is counted.
func (s *Service) SignInWithCode(ctx context.Context, email, code, previous string) (SignedIn, error) {
	email, err := account.NormalizeEmail(email)
	if err != nil {
		return SignedIn{}, err
	}
	var accountID string
	if _, err := s.accounts.ModifyCode(ctx, s.cfg.Tenant, s.cfg.Environment, email, func(c account.EmailCode) (account.EmailCode, error) {
		next, id, err := c.Verify(code, s.instant())
		accountID = id
		return next, err
	}); err != nil {
		return SignedIn{}, err
	}
	if _, err := s.person(ctx, accountID); err != nil {
		return SignedIn{}, err
	}
	a, err := s.accounts.Modify(ctx, accountID, func(a account.Account) (account.Account, error) {
		return a.SignInWithCode(email, s.instant())
	})
	if err != nil {
		return SignedIn{}, err
	}
	s.logger.InfoContext(ctx, "person signed in with an e-mail code", "account_id", a.ID)
	return s.startSession(ctx, a, MethodCode, previous)
}

// startSession ends the browser's previous session, if any, and starts
// a new one: its cookie value is new at every sign-in, so a value known
// before (planted, or of someone else's sign-in on this browser) never
// becomes a signed-in session.
func (s *Service) startSession(ctx context.Context, a account.Account, method, previous string) (SignedIn, error) {
	if previous != "" {
		if err := s.sessions.EndAccountSession(ctx, previous); err != nil {
			return SignedIn{}, err
		}
	}
	cookie, cred, err := s.sessions.StartAccountSession(ctx, auth.AccountSessionRequest{
		Tenant: a.Tenant, Environment: auth.Environment(a.Environment), AccountID: a.ID, Method: method, Lifetime: s.cfg.SessionTTL})
	if err != nil {
		return SignedIn{}, err
	}
	return SignedIn{Cookie: cookie, Session: sessionOf(cookie, cred), Account: a}, nil
}

// Session returns the live session a cookie value names, with its
// person read afresh; false when there is none. A session acting for an
// organisation is live only while its person is still a member.
func (s *Service) Session(ctx context.Context, cookie string) (SignedIn, bool, error) {
	cred, ok, err := s.sessions.AccountSession(ctx, cookie)
	if err != nil || !ok {
		return SignedIn{}, false, err
	}
	if cred.Tenant != s.cfg.Tenant || string(cred.Environment) != s.cfg.Environment {
		return SignedIn{}, false, nil
	}
	personID, actingFor := cred.AccountID, ""
	if cred.ActorID != "" {
		personID, actingFor = cred.ActorID, cred.AccountID
		if _, member, err := s.accounts.Membership(ctx, actingFor, personID); err != nil || !member {
			return SignedIn{}, false, err
		}
	}
	a, err := s.person(ctx, personID)
	if errors.Is(err, store.ErrNotFound) {
		return SignedIn{}, false, nil
	}
	if err != nil {
		return SignedIn{}, false, err
	}
	return SignedIn{Cookie: cookie, Session: sessionOf(cookie, cred), Account: a, ActingFor: actingFor}, true, nil
}

// StartActing ends the browser's session and starts one of organisation
// orgID's account for its person, a member (the caller checked it:
// organizations.Service.MayActFor): every service's website routes and
// hosted pages then see the organisation, and its record names the
// person as who acts. The session is recorded under the membership, and
// the membership read again after, so a removal racing the start never
// leaves the session alive: either the removal finds it
// (organizations.Service.EndActing) or this finds the removal.
func (s *Service) StartActing(ctx context.Context, in SignedIn, orgID string) (SignedIn, error) {
	if err := s.sessions.EndAccountSession(ctx, in.Cookie); err != nil {
		return SignedIn{}, err
	}
	cookie, cred, err := s.sessions.StartAccountSession(ctx, auth.AccountSessionRequest{
		Tenant: in.Account.Tenant, Environment: auth.Environment(in.Account.Environment), AccountID: orgID, ActorID: in.Account.ID,
		Method: in.Session.Method, Lifetime: s.cfg.SessionTTL})
	if err != nil {
		return SignedIn{}, err
	}
	if err := s.accounts.AddActingSession(ctx, orgID, in.Account.ID, cred.PublicID, cred.ExpiresAt); err != nil {
		_ = s.sessions.EndAccountSession(ctx, cookie)
		return SignedIn{}, err
	}
	if _, member, err := s.accounts.Membership(ctx, orgID, in.Account.ID); err != nil || !member {
		_ = s.sessions.EndAccountSession(ctx, cookie)
		if err == nil {
			err = ErrNotAMember
		}
		return SignedIn{}, err
	}
	s.logger.InfoContext(ctx, "person acts for an organisation", "account_id", in.Account.ID, "organization_id", orgID)
	return SignedIn{Cookie: cookie, Session: sessionOf(cookie, cred), Account: in.Account, ActingFor: orgID}, nil
}

// StopActing ends the browser's session acting for an organisation and
// starts one of the person's own.
func (s *Service) StopActing(ctx context.Context, in SignedIn) (SignedIn, error) {
	return s.startSession(ctx, in.Account, in.Session.Method, in.Cookie)
}

// SignOut ends the session a cookie value names, in the store: the value
// signs nothing in afterwards, whoever still holds it.
func (s *Service) SignOut(ctx context.Context, cookie string) error {
	if err := s.sessions.EndAccountSession(ctx, cookie); err != nil {
		return err
	}
	s.logger.InfoContext(ctx, "person signed out")
	return nil
}
