package afteraward

import "time"

// Mode is how an execution moves what the award orders. The four modes
// follow the settlement rails the readiness report names
// (docs/after-award.md, "Executions").
type Mode string

// The execution modes.
const (
	// ModeX402rRefund refunds the original x402 payment to its payer: the
	// platform's refund operator signs an EIP-3009 transfer of the
	// remedy's amount, settled through the x402 facilitator (rail x402r).
	ModeX402rRefund Mode = "x402r_refund"
	// ModeEscrowRelease releases funds a bilateral escrow holds to the
	// payee (rail bilateral_escrow).
	ModeEscrowRelease Mode = "escrow_release"
	// ModeProcessorPayment pays through the partner's payment processor
	// (rails acp and processor_connect).
	ModeProcessorPayment Mode = "processor_payment"
	// ModePartyReported is the obliged side reporting that it carried
	// the remedy out itself, with its evidence (rail partner_executes).
	ModePartyReported Mode = "party_reported"
)

// Modes lists every mode, for docs and tests.
var Modes = []Mode{ModeX402rRefund, ModeEscrowRelease, ModeProcessorPayment, ModePartyReported}

// actionOf is the one action each mode performs; a command names it so
// that a command meant for another mode never runs by mistake.
var actionOf = map[Mode]string{
	ModeX402rRefund:      "refund",
	ModeEscrowRelease:    "release",
	ModeProcessorPayment: "pay",
	ModePartyReported:    "report",
}

// Action returns the action a mode performs.
func Action(m Mode) string { return actionOf[m] }

// ExecutionStatus is where an execution stands.
type ExecutionStatus string

// The execution statuses.
const (
	// ExecutionPending: accepted; the rail has not answered yet.
	ExecutionPending ExecutionStatus = "pending"
	// ExecutionCompleted: done, with its evidence. Never done again.
	ExecutionCompleted ExecutionStatus = "completed"
	// ExecutionFailed: the last attempt failed; the same command (same
	// Idempotency-Key) tries again.
	ExecutionFailed ExecutionStatus = "failed"
)

// Payment is the original payment an x402r refund returns: its network
// (CAIP-2), its payer (who gets the refund) and its transaction.
type Payment struct {
	Network     string `json:"network"`
	Payer       string `json:"payer"`
	Transaction string `json:"transaction"`
}

// Completion is the evidence that an execution was done: the rail's
// transaction for a transfer, or the party's reference and note.
type Completion struct {
	Transaction string `json:"transaction,omitempty"`
	Network     string `json:"network,omitempty"`
	Asset       string `json:"asset,omitempty"`
	From        string `json:"from,omitempty"`
	To          string `json:"to,omitempty"`
	// AmountAtomic is the transfer in the asset's atomic units.
	AmountAtomic string    `json:"amountAtomic,omitempty"`
	Reference    string    `json:"reference,omitempty"`
	Note         string    `json:"note,omitempty"`
	CompletedAt  time.Time `json:"completedAt"`
}

// Attempt is one try of an execution on its rail.
type Attempt struct {
	Number int       `json:"number"`
	At     time.Time `json:"at"`
	// Outcome is completed or failed.
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// Execution is the execution of one remedy of the served award.
type Execution struct {
	ID          string `json:"executionId"`
	Mode        Mode   `json:"mode"`
	Action      string `json:"action"`
	AwardHash   string `json:"awardHash"`
	RemedyIndex int    `json:"remedyIndex"`
	// Side and ParticipantID are who commanded it.
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	// KeyDigest is the SHA-256 of the command's Idempotency-Key: only the
	// same command resumes a failed execution.
	KeyDigest   string          `json:"keyDigest"`
	AmountMinor int64           `json:"amountMinor,omitempty"`
	Currency    string          `json:"currency,omitempty"`
	Payment     *Payment        `json:"payment,omitempty"`
	Status      ExecutionStatus `json:"status"`
	CreatedAt   time.Time       `json:"createdAt"`
	Attempts    []Attempt       `json:"attempts,omitempty"`
	Completion  *Completion     `json:"completion,omitempty"`
}

// Transfers reports whether the mode moves money on a rail the service
// drives (an attempt follows the command), rather than being reported.
func (m Mode) Transfers() bool { return m != ModePartyReported }
