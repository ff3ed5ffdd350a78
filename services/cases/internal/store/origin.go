package store

import "github.com/pcourt/pcourt/services/cases/internal/procedure"

// originRecord is a case's agent-commerce origin as Redis keeps it.
type originRecord struct {
	Protocol  string                 `json:"protocol"`
	Reference string                 `json:"reference"`
	Reason    string                 `json:"reason"`
	Merchant  string                 `json:"merchant"`
	PaidMinor int64                  `json:"paidMinor"`
	Currency  string                 `json:"currency"`
	Evidence  []originEvidenceRecord `json:"evidence"`
}

type originEvidenceRecord struct {
	Kind      string `json:"kind"`
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

func toOriginRecord(o *procedure.Origin) *originRecord {
	if o == nil {
		return nil
	}
	r := &originRecord{Protocol: o.Protocol, Reference: o.Reference, Reason: o.Reason, Merchant: o.Merchant, PaidMinor: o.PaidMinor, Currency: o.Currency}
	for _, e := range o.Evidence {
		r.Evidence = append(r.Evidence, originEvidenceRecord{Kind: e.Kind, MediaType: e.MediaType, Digest: e.Digest})
	}
	return r
}

func (r *originRecord) toOrigin() *procedure.Origin {
	if r == nil {
		return nil
	}
	o := &procedure.Origin{Protocol: r.Protocol, Reference: r.Reference, Reason: r.Reason, Merchant: r.Merchant, PaidMinor: r.PaidMinor, Currency: r.Currency}
	for _, e := range r.Evidence {
		o.Evidence = append(o.Evidence, procedure.OriginEvidence{Kind: e.Kind, MediaType: e.MediaType, Digest: e.Digest})
	}
	return o
}
