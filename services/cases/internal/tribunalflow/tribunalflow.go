// Package tribunalflow is the decision's use cases: a tribunal member's or
// a side's decision act (Act), the deadline scan's part (Ticker: assigning
// from the tribunal pool, opening the first run, closing windows), and
// the issue of an award with its artifacts. Every change goes through
// caseflow's one store step with its outbox; the award's artifacts are
// made inside the decision, from the case as loaded, and stored in that
// same step, so an award and its documents never exist one without the
// other.
package tribunalflow

import (
	"context"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/awarddoc"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// Pool reads the tribunal pool of a tenant and environment (libs/auth).
type Pool interface {
	TribunalPool(ctx context.Context, tenant string, env auth.Environment) ([]auth.TribunalMember, error)
}

// Signer signs an award's json bytes: the attestation and the id of the
// key that made it. Ed25519 is deterministic, so the same bytes give the
// same attestation on a retried decision.
type Signer interface {
	Sign(awardJSON []byte) (keyID, attestation string, err error)
}

// Service applies decision acts.
type Service struct {
	flow   *caseflow.Service
	cases  *store.Cases
	pool   Pool
	signer Signer
	now    func() time.Time
}

// New returns a Service; now may be nil for time.Now.
func New(flow *caseflow.Service, cases *store.Cases, pool Pool, signer Signer, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{flow: flow, cases: cases, pool: pool, signer: signer, now: now}
}

// needsCandidates are the acts that may replace a member.
func needsCandidates(a tribunal.Act) bool {
	return a.Kind == tribunal.ActRecuse || (a.Kind == tribunal.ActResolveChallenge && a.Uphold)
}

// Act applies a decision act at the service's clock. Refusals are
// *tribunal.RefusalError; a missing case is store.ErrNotFound.
func (s *Service) Act(ctx context.Context, caseID string, a tribunal.Act) (caseflow.Result, error) {
	if needsCandidates(a) {
		l, err := s.cases.Load(ctx, caseID)
		if err != nil {
			return caseflow.Result{}, err
		}
		if a.Candidates, err = s.Candidates(ctx, l.Case); err != nil {
			return caseflow.Result{}, err
		}
	}
	now := s.now()
	return s.flow.ChangeDocumented(ctx, caseID, func(c procedure.Case) (procedure.Outcome, []store.Document, error) {
		out, err := tribunal.Decide(c.Tribunal, c.TribunalFacts(), a, now)
		if err != nil {
			return procedure.Outcome{Case: c}, nil, err
		}
		return s.finish(c, out, now)
	})
}

// Ticker is the decision's part of the deadline scan.
func (s *Service) Ticker() caseflow.Ticker {
	return func(ctx context.Context, c procedure.Case, now time.Time) (caseflow.DocumentedDecision, error) {
		var pool []tribunal.Candidate
		// The procedure's tick runs first in the same scan: a record it
		// deems confirmed is assigned in this scan, not a retry later.
		after := procedure.Tick(c, now).Case
		if tribunal.NeedsPool(after.Tribunal, after.TribunalFacts(), now) {
			var err error
			if pool, err = s.Candidates(ctx, c); err != nil {
				return nil, err
			}
		}
		return func(c procedure.Case) (procedure.Outcome, []store.Document, error) {
			out := tribunal.Tick(c.Tribunal, c.TribunalFacts(), pool, now)
			return s.finish(c, out, now)
		}, nil
	}
}

// finish turns the decision's outcome into the case's, and makes the
// artifacts of an award it issued.
func (s *Service) finish(c procedure.Case, out tribunal.Outcome, now time.Time) (procedure.Outcome, []store.Document, error) {
	next := c.WithTribunal(out, now)
	if out.Award == nil {
		return next, nil, nil
	}
	docs, err := s.Artifacts(&next.Case.Tribunal, *out.Award)
	if err != nil {
		return procedure.Outcome{Case: c}, nil, err
	}
	return next, docs, nil
}

// Artifacts makes the award's four documents (json, html, pdf, the
// attestation) and records their digests in the issued award: every
// award of a case, amended ones too (afterawardflow), is made here.
func (s *Service) Artifacts(st *tribunal.State, doc award.Document) ([]store.Document, error) {
	jsonBytes, err := doc.Bytes()
	if err != nil {
		return nil, fmt.Errorf("award of case %s: %w", doc.CaseID, err)
	}
	hash := award.Hash(jsonBytes)
	if hash != st.Award.AwardHash {
		return nil, fmt.Errorf("award of case %s: the json artifact does not hash to the issued awardHash", doc.CaseID)
	}
	html, err := awarddoc.HTML(doc, hash)
	if err != nil {
		return nil, fmt.Errorf("award of case %s: html: %w", doc.CaseID, err)
	}
	pdf, err := awarddoc.PDF(doc, hash)
	if err != nil {
		return nil, fmt.Errorf("award of case %s: pdf: %w", doc.CaseID, err)
	}
	kid, attestation, err := s.signer.Sign(jsonBytes)
	if err != nil {
		return nil, fmt.Errorf("award of case %s: signing: %w", doc.CaseID, err)
	}
	st.Award.HTMLDigest, st.Award.PDFDigest, st.Award.AttestationDigest, st.Award.KeyID =
		award.Hash(html), award.Hash(pdf), award.Hash([]byte(attestation)), kid
	return []store.Document{
		{Digest: hash, Content: jsonBytes},
		{Digest: st.Award.HTMLDigest, Content: html},
		{Digest: st.Award.PDFDigest, Content: pdf},
		{Digest: st.Award.AttestationDigest, Content: []byte(attestation)},
	}, nil
}

// Candidates is the case's tenant and environment's pool, as the
// tribunal package reads it. A member whose configuration does not parse
// is left out (pcadm checks it when it is added).
func (s *Service) Candidates(ctx context.Context, c procedure.Case) ([]tribunal.Candidate, error) {
	members, err := s.pool.TribunalPool(ctx, c.Tenant, auth.Environment(c.Environment))
	if err != nil {
		return nil, fmt.Errorf("reading the tribunal pool: %w", err)
	}
	var out []tribunal.Candidate
	for _, m := range members {
		cand := tribunal.Candidate{CredentialID: m.Credential.PublicID, PartnerID: m.Credential.PartnerID, AgentID: m.Credential.AgentID}
		switch m.Credential.Role {
		case auth.RoleAdjudicator:
			cfg, err := award.ParseConfiguration(m.Configuration)
			if err != nil {
				continue
			}
			cand.Role, cand.Configuration = tribunal.Adjudicator, &cfg
		case auth.RoleReviewer:
			cand.Role = tribunal.Reviewer
		default:
			continue
		}
		out = append(out, cand)
	}
	return out, nil
}
