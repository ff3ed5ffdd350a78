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

// Progress is what a recovery's page says of a job the API reports: its
// sentence, whether the figures are final, and its two bars' values and
// maxima (the window read, the replays sent).
func Progress(status, reason string, total, scanned, scheduled int, pending, delivered, failed, cancelled int) (summary string, finished bool, bars [4]int) {
	v := progressView{Job: recovery{Status: status, CancelReason: reason, Total: total, Scanned: scanned, Scheduled: scheduled,
		Replays: outcomeCounts{Scheduled: pending, Delivered: delivered, Failed: failed, Cancelled: cancelled}}}
	return v.Summary(), v.Finished(), [4]int{v.ScanValue(), v.ScanMax(), v.SentValue(), v.SentMax()}
}
