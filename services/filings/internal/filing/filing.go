// Package filing is the application layer of the filings service, between
// HTTP and the draft domain: it stores prepared drafts and indexes their
// fees, applies one act to a draft with optimistic concurrency, and, when
// the act completes the draft, opens the case in the same Redis step: the
// case-opened fact, the show-once secrets and their hashes. It pays fees
// through the x402 settlement journal, and its reconciler finishes the
// payments nobody waits for. The HTTP layer decodes requests, checks who
// may act and renders answers; everything that reads or changes a draft
// or a fee goes through this package.
package filing

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/events"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// maxAttempts bounds the optimistic retries of one act when other acts
// save the same draft at the same moment.
const maxAttempts = 16

// ErrBusy means concurrent acts kept changing the draft; the caller may
// retry the same request.
var ErrBusy = errors.New("draft changed on every attempt")

// membershipLifetime is how long the draft's memberships carried to the
// case last; the cases service owns the case's authority after that.
const membershipLifetime = 30 * 24 * time.Hour

// Service applies acts to drafts and pays their fees.
type Service struct {
	drafts      *store.Drafts
	credentials *auth.Store
	payments    *journal.Journal // nil: x402 checkout off
	fees        FeeConfig
	logger      *slog.Logger
	now         func() time.Time
}

// Deps are what the service needs.
type Deps struct {
	Drafts      *store.Drafts
	Credentials *auth.Store
	// Payments is the x402 settlement journal fees are paid through, with
	// owner FeeOwner; nil switches x402 checkout off.
	Payments *journal.Journal
	Fees     FeeConfig
	Logger   *slog.Logger
	Now      func() time.Time // nil is time.Now
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{drafts: d.Drafts, credentials: d.Credentials, payments: d.Payments, fees: d.Fees, logger: d.Logger, now: d.Now}
}

// Load reads draft id, which access must let the caller see; a draft it
// may not see does not exist for it (draft.ErrDraftNotFound).
func (s *Service) Load(ctx context.Context, id string, access func(draft.Draft) error) (draft.Draft, error) {
	stored, err := s.drafts.Load(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return draft.Draft{}, draft.ErrDraftNotFound
	}
	if err != nil {
		return draft.Draft{}, err
	}
	if access != nil {
		if err := access(stored.Draft); err != nil {
			return draft.Draft{}, err
		}
	}
	return stored.Draft, nil
}

// Now is the service's clock, which acts use for their instants.
func (s *Service) Now() time.Time { return s.now() }

// Act decides the next state of a draft from its current state. It runs
// again on fresh state when another act saved first, so it must not have
// side effects.
type Act func(draft.Draft) (draft.Outcome, error)

// Secrets are the initial capabilities of an opened case, shown once to
// the caller whose act opened it and stored only as SHA-256 hashes. Each
// is empty unless the opener acts for its side (Service.open).
type Secrets struct {
	ClaimantPartyToken    string
	RespondentInviteToken string
	RespondentLoginToken  string
}

// Opened is the case an act opened.
type Opened struct {
	Case draft.ConfirmedCase
	// Secrets is nil when nobody was there to receive them (an unattended
	// opening, such as the fee reconciler's).
	Secrets *Secrets
}

// Applied is the result of an act: the draft as saved, and the case when
// the act opened it.
type Applied struct {
	Draft  draft.Draft
	Opened *Opened
}

// Apply runs act on the current state of draft id and saves the result
// only if nobody saved in between; otherwise it reads again and decides
// again, so concurrent acts on one draft serialize without locks. access
// runs on every state read before act, to refuse a caller who may not act
// on this draft (draft.ErrDraftNotFound hides its existence). When act
// completes the draft, the same save opens the case; opener is the partner
// of the caller waiting to be shown the case's secrets ("" for none), and
// only the secrets of the sides it acts for are minted (open).
func (s *Service) Apply(ctx context.Context, id string, access func(draft.Draft) error, act Act, opener string) (Applied, error) {
	for range maxAttempts {
		stored, err := s.drafts.Load(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return Applied{}, draft.ErrDraftNotFound
		}
		if err != nil {
			return Applied{}, err
		}
		if access != nil {
			if err := access(stored.Draft); err != nil {
				return Applied{}, err
			}
		}
		outcome, err := act(stored.Draft)
		if err != nil {
			return Applied{}, err
		}
		if !outcome.Opened {
			err = s.drafts.Save(ctx, outcome.Draft, stored.Version, nil)
			if errors.Is(err, store.ErrConflict) {
				continue // another act landed first: decide again on fresh state
			}
			if err != nil {
				return Applied{}, err
			}
			return Applied{Draft: outcome.Draft}, nil
		}
		opened, hashes := s.open(outcome.Draft, opener)
		event, err := events.NewCaseOpened(outcome.Draft, opened.Case, hashes).OutboxEvent()
		if err != nil {
			return Applied{}, err
		}
		err = s.drafts.Save(ctx, outcome.Draft, stored.Version, &store.Opening{Event: event})
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return Applied{}, err
		}
		s.carryMemberships(ctx, outcome.Draft, opened.Case.CaseID)
		return Applied{Draft: outcome.Draft, Opened: &opened}, nil
	}
	return Applied{}, ErrBusy
}

// open builds the case d opens and the secrets shown once to opener, the
// partner whose act opened it ("" when nobody waits for them, as for the
// fee reconciler's opening), with their hashes by purpose. Each secret
// proves a side, and opener is shown only secrets of a side it acts for
// (docs/security.md, "Sides"):
//   - the claimant party token (with a claimant acceptance identity) to a
//     partner of the claimant side;
//   - the respondent invitation and the hosted login when a respondent is
//     hosted (draft.Hosted): to a partner of the claimant side, which
//     delivers them to the person by design and can never use them itself;
//   - the respondent invitation alone when a respondent that has not
//     joined acts through opener itself.
//
// So a partner never receives a secret of a side another partner acts for.
func (s *Service) open(d draft.Draft, opener string) (Opened, map[string]string) {
	opened := Opened{Case: draft.Opened(d, s.now().UTC().Truncate(time.Millisecond))}
	hashes := map[string]string{}
	if opener == "" {
		return opened, hashes
	}
	secrets := &Secrets{}
	forClaimant := d.ActsFor(opener, draft.SideClaimant)
	if forClaimant && d.ClaimantAcceptanceIdentity() != "" {
		// Without a claimant acceptance identity there is no claimant
		// packet or link: partner consent stands in for it.
		secrets.ClaimantPartyToken = auth.NewToken("pc_party_")
		hashes[PurposeClaimantParty] = auth.HashToken(secrets.ClaimantPartyToken)
	}
	var hosted, ownRespondent bool
	for _, p := range d.Participants() {
		switch {
		case d.Hosted(p):
			hosted = true
		case p.Side == draft.SideRespondent && !d.Confirmed(p.ID) && d.EffectivePartner(p) == opener:
			ownRespondent = true
		}
	}
	if (hosted && forClaimant) || ownRespondent {
		secrets.RespondentInviteToken = auth.NewToken("pc_inv_")
		hashes[PurposeRespondentInvite] = auth.HashToken(secrets.RespondentInviteToken)
	}
	if hosted && forClaimant {
		secrets.RespondentLoginToken = auth.NewToken("pc_login_")
		hashes[PurposeRespondentLogin] = auth.HashToken(secrets.RespondentLoginToken)
	}
	if *secrets != (Secrets{}) {
		opened.Secrets = secrets
	}
	return opened, hashes
}

// The purposes of the show-once secrets, as the case-opened fact names
// their hashes.
const (
	PurposeRespondentInvite = "respondent_invite"
	PurposeRespondentLogin  = "respondent_login"
	PurposeClaimantParty    = "claimant_party"
)

// carryMemberships grants on the case every side membership held on the
// draft, so that the agents that prepared and confirmed it act on the case
// they opened without a new grant. The memberships live in the credential
// store's keys, in other hash slots than the draft, so this runs after the
// opening step; a failure is logged and the partner can grant again.
func (s *Service) carryMemberships(ctx context.Context, d draft.Draft, caseID string) {
	ctx = context.WithoutCancel(ctx)
	members, err := s.credentials.Memberships(ctx, "draft:"+d.ID())
	if err != nil {
		s.logger.ErrorContext(ctx, "reading the draft's memberships failed; they are not carried to the case", "draft", d.ID(), "err", err)
		return
	}
	expires := s.now().Add(membershipLifetime)
	for _, m := range members {
		m.Resource, m.ExpiresAt = "case:"+caseID, expires
		if err := s.credentials.Grant(ctx, m); err != nil {
			s.logger.ErrorContext(ctx, "carrying a membership to the case failed", "case", caseID, "side", m.Side, "err", err)
		}
	}
}
