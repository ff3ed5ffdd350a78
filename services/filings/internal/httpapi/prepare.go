package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// prepare creates a draft. The v2 and legacy routes take createDraftBody,
// the canonical route createFilingBody.
func (h *handlers) prepare(route draft.Route) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Header("Cache-Control", "no-store") // a mutation's answer
		cred, _ := auth.CredentialFrom(c.Request.Context())
		in, err := decodePrepare(c, route)
		if err != nil {
			_ = c.Error(err)
			return
		}
		h.create(c, cred, in, route)
	}
}

// create prepares and stores the draft in asks for, on behalf of cred, and
// answers 201 with it in route's view. The filing routes and the
// resolution requests share it.
func (h *handlers) create(c *gin.Context, cred auth.Credential, in draft.PrepareInput, route draft.Route) {
	if cred.ForAccount() && cred.CaseID != "" {
		// A token bound to a case touches that case alone (docs/accounts.md):
		// no draft, the one it would create included.
		_ = c.Error(&draft.RefusalError{Code: draft.CodeForbidden, Detail: "this account token is bound to case " + cred.CaseID + " and prepares no draft"})
		return
	}
	in.TenantID, in.Environment, in.PartnerID, in.AccountID, in.CreatedBy = cred.Tenant, string(cred.Environment), cred.PartnerID, cred.AccountID, cred.PublicID
	d, err := draft.Prepare(in, h.rules, h.now(), randomIDs{})
	var invalid *draft.ValidationError
	if errors.As(err, &invalid) && invalid.Field == "expiresIn" {
		invalid.Field = "expiresInSeconds" // the domain's name for the body's field
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	ctx := c.Request.Context()
	if err := h.filings.Prepare(ctx, d); err != nil {
		_ = c.Error(err)
		return
	}
	if cred.Role == auth.RoleClaimantAgent {
		// The agent that prepared the draft acts for its claimant side.
		if err := h.credentials.Grant(ctx, auth.Membership{Resource: resource(d.ID()), Side: auth.Claimant, Subject: auth.CredentialSubject(cred.PublicID), ExpiresAt: membershipExpiry(d)}); err != nil {
			_ = c.Error(err)
			return
		}
	}
	// Each account taking part acts for its participant's side through a
	// membership naming it, which the opening carries to the case.
	for _, p := range d.Participants() {
		if p.AccountID == "" {
			continue
		}
		if err := h.credentials.Grant(ctx, auth.Membership{Resource: resource(d.ID()), Side: auth.Side(p.Side), Subject: auth.AccountSubject(p.AccountID), ExpiresAt: membershipExpiry(d)}); err != nil {
			_ = c.Error(err)
			return
		}
	}
	c.Header("Location", draftPath(route, d.ID()))
	journalDraft(c, d)
	c.JSON(http.StatusCreated, gin.H{"data": h.draftView(d, route), "requestId": requestid.Get(c)})
}

func decodePrepare(c *gin.Context, route draft.Route) (draft.PrepareInput, error) {
	if route == draft.RouteCanonical {
		var b createFilingBody
		if err := httpserver.DecodeJSON(c, &b); err != nil {
			return draft.PrepareInput{}, err
		}
		return toPrepareInput(true, false, b.ExternalCaseID, b.CaseMode, b.IntakeMode, b.ConfirmationPolicy, b.Schedule,
			b.Participants, b.Claim, b.Evaluation, b.ClaimantAcceptanceIdentity, b.ExpiresInSeconds)
	}
	var b createDraftBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		return draft.PrepareInput{}, err
	}
	return toPrepareInput(false, route == draft.RouteLegacy, b.ExternalCaseID, b.CaseMode, b.IntakeMode, b.ConfirmationPolicy, b.Procedure,
		b.Participants, b.Claim, b.Evaluation, b.ClaimantAcceptanceIdentity, b.ExpiresInSeconds)
}

func toPrepareInput(canonical, legacy bool, externalID, caseMode, intake string, policy policyBody, plan procedureBody,
	participants []participantBody, claim claimBody, eval *evaluationBody, acceptance string, expiresIn *int) (draft.PrepareInput, error) {
	in := draft.PrepareInput{
		Canonical: canonical, Legacy: legacy, ExternalCaseID: externalID,
		CaseMode: draft.CaseMode(caseMode), IntakeMode: draft.IntakeMode(intake), ConfirmationMode: draft.ConfirmationMode(policy.Mode),
		Procedure:                      toProcedure(plan),
		PlanSchemaVersion:              plan.SchemaVersion,
		PlanRecordConfirmationRequired: plan.RecordConfirmationRequired,
		Claim:                          draft.Claim{Remedy: draft.Remedy(claim.Remedy), Summary: claim.Summary, MicroTierConsent: claim.MicroTierConsent},
		ClaimantAcceptanceIdentity:     acceptance,
	}
	planField := "procedure"
	if canonical {
		planField = "schedule"
	}
	if plan.Profile == nil {
		return draft.PrepareInput{}, &draft.ValidationError{Field: planField + ".profile", Reason: "is required"}
	}
	if claim.AmountInDisputeMinor == nil {
		return draft.PrepareInput{}, &draft.ValidationError{Field: "claim.amountInDisputeMinor", Reason: "is required"}
	}
	in.Claim.AmountInDisputeMinor = *claim.AmountInDisputeMinor
	if expiresIn != nil {
		in.ExpiresIn = time.Duration(*expiresIn) * time.Second
		if in.ExpiresIn <= 0 {
			return draft.PrepareInput{}, &draft.ValidationError{Field: "expiresInSeconds", Reason: "must be positive"}
		}
	}
	for i, p := range participants {
		kind, ok := draft.PrincipalKind(p.PrincipalKind), true
		if !canonical {
			// The v2 routes also take the earlier kinds (human, ai_agent).
			if p.PrincipalKind == "" {
				kind = ""
			} else {
				kind, ok = draft.ParsePrincipalKind(p.PrincipalKind)
			}
		}
		if !ok {
			return draft.PrepareInput{}, &draft.ValidationError{Field: "participants[" + strconv.Itoa(i) + "].principalKind", Reason: "must be individual, organization or autonomous_agent (human or ai_agent on the v2 routes)"}
		}
		in.Participants = append(in.Participants, draft.Participant{
			ID: p.ParticipantID, Side: draft.Side(p.Side), PartnerID: p.PartnerID, PrincipalID: p.PrincipalID,
			PrincipalKind: kind, AgentID: p.AgentID, AccountID: p.AccountID, AuthorizationMode: draft.AuthorizationMode(p.AuthorizationMode), Initiator: p.Initiator,
		})
	}
	if eval != nil {
		in.Evaluation = &draft.Evaluation{
			ExternalEvaluationID: eval.ExternalEvaluationID,
			Question:             draft.Question{Text: eval.Question.Text, Criteria: eval.Question.Criteria},
			AllowedOutcomes:      eval.AllowedOutcomes,
			EvidencePolicy:       draft.EvidencePolicy(eval.EvidencePolicy), ReviewPolicy: draft.ReviewPolicy(eval.ReviewPolicy),
		}
	}
	return in, nil
}

// toProcedure fills a named profile's plan; custom_bounded takes the
// caller's values, which the domain checks against the bounds.
func toProcedure(b procedureBody) draft.Procedure {
	var p draft.Procedure
	if b.Profile != nil {
		p.Profile = draft.Profile(*b.Profile)
	}
	if defaults, ok := draft.ProfileDefaults(p.Profile); ok {
		p = defaults
	}
	if b.AnswerRequired != nil {
		p.AnswerRequired = *b.AnswerRequired
	}
	if b.EvidenceRounds != nil {
		p.EvidenceRounds = *b.EvidenceRounds
	}
	if b.RebuttalRounds != nil {
		p.RebuttalRounds = *b.RebuttalRounds
	}
	if b.FilingsPerSidePerStage != nil {
		p.FilingsPerSidePerStage = *b.FilingsPerSidePerStage
	}
	p.RecordConfirmationRequired = true
	return p
}

// read serves a draft. The v2 and canonical reads show the same stored
// packet and digest in their own view.
func (h *handlers) read(route draft.Route) gin.HandlerFunc {
	return func(c *gin.Context) {
		cred, _ := auth.CredentialFrom(c.Request.Context())
		d, err := h.load(c.Request.Context(), c.Param("id"), cred)
		if err != nil {
			_ = c.Error(err)
			return
		}
		if err := h.authorizeReader(c, cred, d); err != nil {
			_ = c.Error(err)
			return
		}
		c.Header("Cache-Control", "private, no-store")
		c.JSON(http.StatusOK, gin.H{"data": h.draftView(d, route), "requestId": requestid.Get(c)})
	}
}

// load reads a draft of the credential's tenant and environment in which
// the credential's partner acts for a participant. Any other draft (of
// another tenant or environment, or one where the partner has no
// participant) does not exist for this caller: answering 404 rather than
// 403 keeps its existence undisclosed.
func (h *handlers) load(ctx context.Context, id string, cred auth.Credential) (draft.Draft, error) {
	return h.filings.Load(ctx, id, h.access(cred))
}

// access refuses cred any draft outside its tenant and environment, and
// any draft in which its partner acts for no participant (an account
// token: in which its account is no participant, or any draft when the
// token is bound to a case), as if it did not exist.
func (h *handlers) access(cred auth.Credential) func(draft.Draft) error {
	return func(d draft.Draft) error {
		if d.TenantID() != cred.Tenant || d.Environment() != string(cred.Environment) {
			return draft.ErrDraftNotFound
		}
		if cred.ForAccount() {
			if _, ok := d.AccountOf(cred.AccountID); !ok || !cred.MayTouch(resource(d.ID())) {
				return draft.ErrDraftNotFound
			}
			return nil
		}
		if !d.Involves(cred.PartnerID) {
			return draft.ErrDraftNotFound
		}
		return nil
	}
}

// recheckConfirmation runs before a stored confirmation answer is replayed:
// the credential must still be authorized for the draft, and an unopened
// draft must not have expired.
func (h *handlers) recheckConfirmation(c *gin.Context) error {
	cred, _ := auth.CredentialFrom(c.Request.Context())
	d, err := h.load(c.Request.Context(), c.Param("id"), cred)
	if err != nil {
		return err
	}
	if d.Status() != draft.StatusOpened && !h.now().Before(d.ExpiresAt()) {
		return &draft.RefusalError{Code: draft.CodeDraftExpired, Detail: "the draft expired at " + timestamp(d.ExpiresAt())}
	}
	var body confirmBody
	if err := json.NewDecoder(c.Request.Body).Decode(&body); err == nil {
		return h.authorizeParticipant(c, cred, d, body.ParticipantID)
	}
	return nil
}

func actorOf(cred auth.Credential, route draft.Route) draft.Actor {
	return draft.Actor{
		CredentialID: cred.PublicID, Role: draft.Role(cred.Role), TenantID: cred.Tenant,
		Environment: string(cred.Environment), PartnerID: cred.PartnerID, AgentID: cred.AgentID, AccountID: cred.AccountID, Route: route,
	}
}

func resource(draftID string) string { return "draft:" + draftID }

func draftPath(route draft.Route, id string) string {
	if route == draft.RouteCanonical {
		return "/api/filings/" + id
	}
	return "/api/v2/case-drafts/" + id
}

// randomIDs makes the draft's identifiers: 128 random bits each.
type randomIDs struct{}

func (randomIDs) DraftID() string { return "dr_" + randomID() }
func (randomIDs) CaseID() string  { return "cs_" + randomID() }
func (randomIDs) FeeID() string   { return "fee_" + randomID() }

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
