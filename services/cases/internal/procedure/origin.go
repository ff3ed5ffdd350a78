package procedure

import "slices"

// Origin says the case was opened from an agent-commerce resolution
// request (docs/agent-commerce.md): the protocol, the disputed
// transaction, what was paid, and the protocol's objects by digest. The
// case-opened fact carries it from the draft; nothing changes it after.
type Origin struct {
	// Protocol is ap2 or ucp.
	Protocol string
	// Reference is AP2's payment mandate transaction_id or UCP's order id.
	Reference string
	Reason    string
	Merchant  string
	PaidMinor int64
	Currency  string
	Evidence  []OriginEvidence
}

// OriginEvidence is one protocol object by the SHA-256 of its bytes.
type OriginEvidence struct {
	Kind      string // payment_mandate, checkout_mandate or order
	MediaType string
	Digest    string
}

func (o *Origin) clone() *Origin {
	if o == nil {
		return nil
	}
	c := *o
	c.Evidence = slices.Clone(o.Evidence)
	return &c
}

// EvidenceDigest returns the digest of the origin's object of kind, or "".
func (o *Origin) EvidenceDigest(kind string) string {
	for _, e := range o.Evidence {
		if e.Kind == kind {
			return e.Digest
		}
	}
	return ""
}
