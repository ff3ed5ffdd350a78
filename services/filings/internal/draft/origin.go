package draft

import (
	"encoding/base64"
	"fmt"
	"slices"
)

// Origin says a draft was prepared from an agent-commerce protocol's own
// objects (POST /api/v2/ap2/resolution-requests or
// /api/v2/ucp/resolution-requests, docs/agent-commerce.md): which
// protocol, the transaction it disputes, and the objects that are its
// evidence, pinned by digest. The terms of the draft carry everything but
// the objects' bytes, so the draft digest every participant confirms pins
// the evidence; the bytes are kept beside the terms, exactly as received.
type Origin struct {
	Protocol Protocol
	// Reference is the protocol's id of the disputed transaction: AP2's
	// payment mandate transaction_id, UCP's order id.
	Reference string
	// Reason is the dispute's class (non_delivery, not_as_described, …).
	Reason string
	// Merchant is the merchant's id as the protocol's objects name it.
	Merchant string
	// PaidMinor and Currency are what the payment mandate or the order
	// says was paid, in the currency's minor units.
	PaidMinor int64
	Currency  string
	Evidence  []OriginEvidence
}

// OriginEvidence is one protocol object the dispute rests on.
type OriginEvidence struct {
	// Kind is payment_mandate, checkout_mandate or order.
	Kind string
	// MediaType is application/sd-jwt for a mandate, application/json for
	// an order.
	MediaType string
	// Digest is the SHA-256 (lowercase hex) of Original.
	Digest string
	// Original is the object's bytes exactly as the request carried them.
	Original []byte
}

// Protocol is an agent-commerce protocol a draft can come from.
type Protocol string

// The protocols.
const (
	ProtocolAP2 Protocol = "ap2"
	ProtocolUCP Protocol = "ucp"
)

// The evidence kinds, and how many of each an origin may hold.
var evidenceKinds = []string{"payment_mandate", "checkout_mandate", "order"}

// maxOriginalBytes bounds one object's bytes: mandates and orders are a
// few kilobytes; the request body limit is the first bound.
const maxOriginalBytes = 64 << 10

func (o *Origin) clone() *Origin {
	if o == nil {
		return nil
	}
	c := *o
	c.Evidence = make([]OriginEvidence, len(o.Evidence))
	for i, e := range o.Evidence {
		e.Original = slices.Clone(e.Original)
		c.Evidence[i] = e
	}
	return &c
}

// validate checks an origin's own invariants. The protocol's rules (the
// SD-JWT checks, the currency) belong to the package that reads the
// protocol's objects; here only what the draft relies on.
func (o *Origin) validate() error {
	if o.Protocol != ProtocolAP2 && o.Protocol != ProtocolUCP {
		return invalid("origin.protocol", "must be ap2 or ucp")
	}
	if err := visible("origin.reference", o.Reference, 160); err != nil {
		return err
	}
	if err := token("origin.reason", o.Reason, 64); err != nil {
		return err
	}
	if err := name("origin.merchant", o.Merchant, maxPrincipalRunes); err != nil {
		return err
	}
	if o.PaidMinor < 0 || len(o.Currency) != 3 {
		return invalid("origin", "needs the paid amount and its ISO 4217 currency")
	}
	if len(o.Evidence) == 0 || len(o.Evidence) > len(evidenceKinds) {
		return invalid("origin.evidence", fmt.Sprintf("must have 1 to %d items", len(evidenceKinds)))
	}
	seen := map[string]bool{}
	for i, e := range o.Evidence {
		at := fmt.Sprintf("origin.evidence[%d]", i)
		switch {
		case !contains(e.Kind, evidenceKinds) || seen[e.Kind]:
			return invalid(at+".kind", "must be one of "+joinList(evidenceKinds)+", each once")
		case e.MediaType != "application/sd-jwt" && e.MediaType != "application/json":
			return invalid(at+".mediaType", "must be application/sd-jwt or application/json")
		case len(e.Original) == 0 || len(e.Original) > maxOriginalBytes:
			return invalid(at, fmt.Sprintf("must be 1 to %d bytes", maxOriginalBytes))
		case e.Digest != sha256Hex(e.Original):
			return invalid(at+".digest", "must be the SHA-256 of the object's bytes")
		}
		seen[e.Kind] = true
	}
	return nil
}

// originJSON is the origin in the draft's terms: the objects by digest.
type originJSON struct {
	Protocol  Protocol             `json:"protocol"`
	Reference string               `json:"reference"`
	Reason    string               `json:"reason"`
	Merchant  string               `json:"merchant"`
	PaidMinor int64                `json:"paidMinor"`
	Currency  string               `json:"currency"`
	Evidence  []originEvidenceJSON `json:"evidence"`
}

type originEvidenceJSON struct {
	Kind      string `json:"kind"`
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

// originRecord is the origin as the store keeps it: the terms and, per
// object, its bytes (standard base64, so they survive JSON unchanged).
// It spells the terms' fields out rather than embed originJSON, so both
// JSON packages that read and write records see the same members.
type originRecord struct {
	Protocol  Protocol             `json:"protocol"`
	Reference string               `json:"reference"`
	Reason    string               `json:"reason"`
	Merchant  string               `json:"merchant"`
	PaidMinor int64                `json:"paidMinor"`
	Currency  string               `json:"currency"`
	Evidence  []originEvidenceJSON `json:"evidence"`
	Originals []string             `json:"originals"`
}

func (o *Origin) toJSON() *originJSON {
	if o == nil {
		return nil
	}
	j := &originJSON{Protocol: o.Protocol, Reference: o.Reference, Reason: o.Reason, Merchant: o.Merchant,
		PaidMinor: o.PaidMinor, Currency: o.Currency, Evidence: make([]originEvidenceJSON, len(o.Evidence))}
	for i, e := range o.Evidence {
		j.Evidence[i] = originEvidenceJSON{Kind: e.Kind, MediaType: e.MediaType, Digest: e.Digest}
	}
	return j
}

func (o *Origin) toRecord() *originRecord {
	if o == nil {
		return nil
	}
	j := o.toJSON()
	r := &originRecord{Protocol: j.Protocol, Reference: j.Reference, Reason: j.Reason, Merchant: j.Merchant,
		PaidMinor: j.PaidMinor, Currency: j.Currency, Evidence: j.Evidence, Originals: make([]string, len(o.Evidence))}
	for i, e := range o.Evidence {
		r.Originals[i] = base64.StdEncoding.EncodeToString(e.Original)
	}
	return r
}

func (r *originRecord) toOrigin() (*Origin, error) {
	if r == nil {
		return nil, nil
	}
	if len(r.Originals) != len(r.Evidence) {
		return nil, fmt.Errorf("origin: %d originals for %d evidence items", len(r.Originals), len(r.Evidence))
	}
	o := &Origin{Protocol: r.Protocol, Reference: r.Reference, Reason: r.Reason, Merchant: r.Merchant,
		PaidMinor: r.PaidMinor, Currency: r.Currency, Evidence: make([]OriginEvidence, len(r.Evidence))}
	for i, e := range r.Evidence {
		b, err := base64.StdEncoding.DecodeString(r.Originals[i])
		if err != nil {
			return nil, fmt.Errorf("origin.originals[%d]: %v", i, err)
		}
		o.Evidence[i] = OriginEvidence{Kind: e.Kind, MediaType: e.MediaType, Digest: e.Digest, Original: b}
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// Origin returns a copy of the draft's agent-commerce origin, or nil for a
// draft prepared on the filing routes.
func (d Draft) Origin() *Origin { return d.origin.clone() }
