// Package afterawardflow is the use cases after the award: a side's, the
// reviewer's or the appellate reviewer's act (Act; an appeal's reviewer
// is picked from the tribunal pool as it is filed), an appeal fee paid
// through the x402 settlement journal (PayAppealFee, FulfilFee:
// appealfee.go), an execution with its transfer on the rail (Execute),
// and the deadline scan's part (Ticker: lapsed appeals, finality). Every change
// goes through caseflow's one store step with its outbox; an amended
// award's artifacts are made by tribunalflow, as every award's are, and
// stored in the step that serves it.
//
// A transfer is never made inside a case's store step: the execution is
// recorded first (pending), the rail moves the money, and its answer is
// recorded as an attempt. The rail is idempotent by execution id (the
// refund's EIP-3009 nonce derives from it), so a crash between the two,
// or two replicas resuming one execution, settles one transfer.
package afterawardflow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/rails"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// Tribunal makes an award's documents and records their digests in the
// served award (every award's, in one place), and reads the tribunal pool
// an appellate reviewer is picked from (tribunalflow.Service).
type Tribunal interface {
	Artifacts(st *tribunal.State, doc award.Document) ([]store.Document, error)
	Candidates(ctx context.Context, c procedure.Case) ([]tribunal.Candidate, error)
}

// Refunds moves x402r refunds (internal/rails.X402Refunds). Refund must
// be idempotent by the transfer's ExecutionID: called again, by any
// replica, it answers the first settlement.
type Refunds interface {
	Refund(ctx context.Context, t rails.Transfer) (rails.Receipt, error)
}

// Config are a Service's parts.
type Config struct {
	Flow     *caseflow.Service
	Cases    *store.Cases
	Tribunal Tribunal
	// Refunds is nil where the x402r rail is not configured: its
	// executions are refused.
	Refunds Refunds
	// Payments and Fees collect appeal fees with x402; nil Payments (or
	// no payee) invoices them.
	Payments Payments
	Fees     FeeConfig
	// Now is the clock; nil for time.Now.
	Now func() time.Time
}

// Service applies acts after the award.
type Service struct {
	flow     *caseflow.Service
	cases    *store.Cases
	tribunal Tribunal
	refunds  Refunds
	payments Payments
	fees     FeeConfig
	now      func() time.Time
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{flow: cfg.Flow, cases: cfg.Cases, tribunal: cfg.Tribunal, refunds: cfg.Refunds, payments: cfg.Payments, fees: cfg.Fees, now: cfg.Now}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Modes are the execution modes this deployment runs: a party's report
// always, an x402r refund where the rail is configured. Escrow release
// and processor payments have no rail here yet (docs/after-award.md).
func (s *Service) Modes() []afteraward.Mode {
	modes := []afteraward.Mode{afteraward.ModePartyReported}
	if s.refunds != nil {
		modes = append(modes, afteraward.ModeX402rRefund)
	}
	return modes
}

// errServedChanged means the served award changed between reading its
// document and deciding: the act is decided again on the new one.
var errServedChanged = errors.New("the served award changed")

// Act applies an act at the service's clock. Refusals are
// *afteraward.RefusalError; a missing case is store.ErrNotFound.
func (s *Service) Act(ctx context.Context, caseID string, a afteraward.Act) (caseflow.Result, afteraward.Outcome, error) {
	for range caseflow.Attempts {
		res, out, err := s.act(ctx, caseID, a)
		if errors.Is(err, errServedChanged) {
			continue
		}
		return res, out, err
	}
	return caseflow.Result{}, afteraward.Outcome{}, fmt.Errorf("case %s: %w", caseID, caseflow.ErrBusy)
}

func (s *Service) act(ctx context.Context, caseID string, a afteraward.Act) (caseflow.Result, afteraward.Outcome, error) {
	l, err := s.cases.Load(ctx, caseID)
	if err != nil {
		return caseflow.Result{}, afteraward.Outcome{}, err
	}
	served, err := s.served(ctx, l.Case)
	if err != nil {
		return caseflow.Result{}, afteraward.Outcome{}, err
	}
	var pool []tribunal.Candidate
	if a.Kind == afteraward.ActFileAppeal {
		if pool, err = s.tribunal.Candidates(ctx, l.Case); err != nil {
			return caseflow.Result{}, afteraward.Outcome{}, err
		}
	}
	now := s.now()
	var decided afteraward.Outcome
	res, err := s.flow.ChangeDocumented(ctx, caseID, func(c procedure.Case) (procedure.Outcome, []store.Document, error) {
		f := c.AfterAwardFacts()
		if hashOf(c) != hashOf(l.Case) {
			return procedure.Outcome{Case: c}, nil, errServedChanged
		}
		f.Served, f.Modes = served, s.Modes()
		if a.Kind == afteraward.ActFileAppeal {
			if m, ok := tribunal.AppellateReviewer(c.Tribunal, c.TribunalFacts(), pool, now); ok {
				f.AppellateReviewer = &m
			}
			f.AppealFeeCollection = s.collection(c.Environment)
		}
		out, err := afteraward.Decide(c.AfterAward, f, a, now)
		if err != nil {
			return procedure.Outcome{Case: c}, nil, err
		}
		decided = out
		next := c.WithAfterAward(out, now)
		if out.Award == nil {
			return next, nil, nil
		}
		docs, err := s.tribunal.Artifacts(&next.Case.Tribunal, *out.Award)
		if err != nil {
			return procedure.Outcome{Case: c}, nil, err
		}
		return next, docs, nil
	})
	return res, decided, err
}

func hashOf(c procedure.Case) string {
	if c.Tribunal.Award == nil {
		return ""
	}
	return c.Tribunal.Award.AwardHash
}

// served reads the served award's document from its json artifact.
func (s *Service) served(ctx context.Context, c procedure.Case) (*award.Document, error) {
	if c.Tribunal.Award == nil {
		return nil, nil
	}
	b, ok, err := s.cases.Document(ctx, c.ID, c.Tribunal.Award.AwardHash)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("case %s: the json artifact of award %s is missing", c.ID, c.Tribunal.Award.AwardHash)
	}
	doc, err := award.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("case %s: award %s: %w", c.ID, c.Tribunal.Award.AwardHash, err)
	}
	return &doc, nil
}

// ExecutionFailedError is an execution whose transfer failed: it is
// recorded as a failed attempt, and the same command tries again.
type ExecutionFailedError struct {
	ExecutionID string
	// Detail is what the attempt recorded, safe to show; Cause is the
	// rail's error, which only the service's log sees.
	Detail string
	Cause  error
}

func (e *ExecutionFailedError) Error() string {
	if e.Cause == nil {
		return "execution " + e.ExecutionID + " failed: " + e.Detail
	}
	return "execution " + e.ExecutionID + " failed: " + e.Detail + ": " + e.Cause.Error()
}

// Unwrap is the rail's error.
func (e *ExecutionFailedError) Unwrap() error { return e.Cause }

// Execute commands an execution: it records the execution (or finds the
// failed or pending one the same command made), moves the money on the
// rail for a transfer mode, and records the rail's answer. The result
// holds every event of the command; a failed transfer is
// *ExecutionFailedError after its attempt is recorded.
func (s *Service) Execute(ctx context.Context, caseID string, a afteraward.Act) (caseflow.Result, afteraward.Execution, error) {
	res, out, err := s.Act(ctx, caseID, a)
	if err != nil {
		return res, afteraward.Execution{}, err
	}
	e, _ := res.Case.AfterAward.Execution(out.ExecutionID)
	if e.Status == afteraward.ExecutionCompleted || !e.Mode.Transfers() {
		return res, e, nil
	}
	attempt := afteraward.Act{Kind: afteraward.ActRecordAttempt, ExecutionID: e.ID}
	receipt, rerr := s.transfer(ctx, caseID, e)
	if rerr != nil {
		attempt.Detail = failure(rerr)
	} else {
		attempt.Completion = &afteraward.Completion{Transaction: receipt.Transaction, Network: receipt.Network, Asset: receipt.Asset,
			From: receipt.From, To: receipt.To, AmountAtomic: strconv.FormatUint(receipt.Amount, 10)}
	}
	recorded, _, err := s.Act(ctx, caseID, attempt)
	if err != nil {
		return res, e, err
	}
	if len(res.Events) == 0 {
		res.FirstSequence = recorded.FirstSequence
	}
	res.Case, res.Events = recorded.Case, append(res.Events, recorded.Events...)
	e, _ = recorded.Case.AfterAward.Execution(e.ID)
	if e.Status != afteraward.ExecutionCompleted {
		return res, e, &ExecutionFailedError{ExecutionID: e.ID, Detail: attempt.Detail, Cause: rerr}
	}
	return res, e, nil
}

// transfer moves an execution's money on its rail: the remedy's amount
// in USDC's atomic units, to the original payment's payer.
func (s *Service) transfer(ctx context.Context, caseID string, e afteraward.Execution) (rails.Receipt, error) {
	if e.Mode != afteraward.ModeX402rRefund || s.refunds == nil || e.Payment == nil {
		return rails.Receipt{}, fmt.Errorf("case %s: execution %s: mode %s has no rail on this deployment", caseID, e.ID, e.Mode)
	}
	amount, err := rails.AtomicUSDC(e.Currency, e.AmountMinor)
	if err != nil {
		return rails.Receipt{}, err
	}
	asset, ok := x402.USDC(e.Payment.Network)
	if !ok {
		return rails.Receipt{}, fmt.Errorf("no USDC is known on network %s", e.Payment.Network)
	}
	return s.refunds.Refund(ctx, rails.Transfer{ExecutionID: e.ID, Network: e.Payment.Network, Asset: asset.Address.Hex(),
		To: e.Payment.Payer, Amount: amount, CreatedAt: e.CreatedAt})
}

// failure is what an attempt records, and both sides read, of a failed
// transfer: the rail's refusal reason, or what to do about no answer;
// never the error itself, which may name the facilitator's address (it
// is logged).
func failure(err error) string {
	var refused *rails.Refusal
	switch {
	case errors.As(err, &refused):
		return "refused by the rail: " + refused.Reason
	case errors.Is(err, rails.ErrUnavailable):
		return "the rail did not answer; the transfer may have settled, and the same command asks again"
	case errors.Is(err, rails.ErrNonceUsed):
		return "the execution's authorization was spent by another one; an operator reconciles it before anything is paid"
	}
	return "the transfer failed"
}

// KeyDigest is the digest an execution keeps of its command's
// Idempotency-Key, scoped by the credential that sent it.
func KeyDigest(credentialID, key string) string {
	sum := sha256.Sum256([]byte(credentialID + "\x00" + key))
	return hex.EncodeToString(sum[:])
}

// Ticker is the deadline scan's part: an appeal whose fee was not paid
// lapses, and the award becomes final.
func (s *Service) Ticker() caseflow.Ticker {
	return func(_ context.Context, c procedure.Case, now time.Time) (caseflow.DocumentedDecision, error) {
		return func(c procedure.Case) (procedure.Outcome, []store.Document, error) {
			out := afteraward.Tick(c.AfterAward, c.AfterAwardFacts(), now)
			if len(out.Notes) == 0 {
				return procedure.Outcome{Case: c}, nil, nil
			}
			return c.WithAfterAward(out, now), nil, nil
		}, nil
	}
}
