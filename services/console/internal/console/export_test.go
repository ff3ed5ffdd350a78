package console

// EventTableRows exposes the catalogue's table rows to the external tests.
var EventTableRows = eventTableRows

// ShownAnswer is what a delivery's page shows of a receiver's answer body,
// and whether it clipped it.
func ShownAnswer(body string) (string, bool) {
	r := attemptRows([]attempt{{ResponseBody: body}})[0]
	return r.BodyShown, r.BodyClipped
}

// DecisionTableRows exposes the decision events' rows to the external tests.
var DecisionTableRows = decisionTableRows

// EvidenceTableRows exposes the evidence events' rows to the external tests.
var EvidenceTableRows = evidenceTableRows

// AfterAwardTableRows exposes the after-award events' rows to the external tests.
var AfterAwardTableRows = afterAwardTableRows

// SettlementTableRows exposes the settlement events' rows to the external tests.
var SettlementTableRows = settlementTableRows
