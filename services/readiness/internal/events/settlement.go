// Package events holds the facts the readiness service publishes, as data:
// their Kafka topic, schema name and payload type. Each payload has a JSON
// Schema under api/events; the tests validate every produced payload
// against it.
package events

import "time"

// The settlement fact: one per settled readiness payment, recorded by the
// settlement journal in the same step as the settlement. Its schema is
// api/events/readiness-settlement-v1.schema.json.
const (
	SettlementTopic  = "pc.readiness.settlements.v1"
	SettlementSchema = "readiness-settlement-v1"
)

// Settlement is the fact published when a readiness payment settles.
type Settlement struct {
	EventID       string    `json:"eventId"`
	PaymentID     string    `json:"paymentId"`
	Network       string    `json:"network"`
	Asset         string    `json:"asset"`
	Payer         string    `json:"payer"`
	PayTo         string    `json:"payTo"`
	Amount        string    `json:"amount"`
	Transaction   string    `json:"transaction"`
	Resource      string    `json:"resource"`
	RulesVersion  string    `json:"rulesVersion"`
	SettledAt     time.Time `json:"settledAt"`
	Reconciled    bool      `json:"reconciled"`
	RequestDigest string    `json:"requestDigest"`
}
