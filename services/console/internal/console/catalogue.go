package console

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// eventDoc is one row of the case events table of docs/cases-procedure.md:
// when the cases service emits the type, to whom, and whether it asks the
// recipients to act by a deadline.
type eventDoc struct {
	Type           string
	When           string
	Recipients     string
	ActionRequired bool
	Deadline       string // "—": none
}

// eventDocs is a copy of that table (the cases service's procedure.EventSpecs
// in words), held equal to the document by
// TestTheEventCatalogueIsTheProcedureTable.
var eventDocs = []eventDoc{
	{"opened", "the case-opened event is applied", "both sides' partners", false, "the first stage's deadline"},
	{"respondent_invited", "the claimant invites the respondent (the invitation secret rotates)", "claimant's", false, "the join deadline, while the respondent is awaited"},
	{"respondent_joined", "a respondent joins", "both", false, "—"},
	{"stage_opened", "an answer, evidence or rebuttal stage opens", "the sides acting in it (answer: respondent's; rounds: every joined side's)", true, "the stage deadline"},
	{"answer_filed", "the respondent files its answer", "claimant's", false, "—"},
	{"message_posted", "a side posts a message", "the other side's", false, "—"},
	{"submission_filed", "a side files a submission", "the other side's", false, "—"},
	{"submission_amended", "a side amends one of its submissions in the open round", "the other side's", false, "—"},
	{"record_confirmation_requested", "the last round closed: the sides confirm the record", "every joined side's", true, "the record confirmation deadline"},
	{"record_confirmation_given", "one side confirmed; the other still has to", "the other side's", true, "the record confirmation deadline"},
	{"record_confirmed", "every joined side confirmed the record, or its deadline passed", "both", false, "—"},
	{"record_corrected", "a side corrected one of its record entries: the summary changed, and a confirmation given before is withdrawn", "both", true, "the record confirmation deadline"},
	{"termination_requested", "a side asks to end the case", "the other side's", true, "the confirmation deadline"},
	{"termination_lapsed", "the request was not confirmed in time, or the award was issued or the sides settled while it was pending", "both", false, "—"},
	{"terminated", "the other side confirmed, or the claimant withdrew before any respondent joined", "both", false, "—"},
	{"deadline_approaching", "`Warning` before a stage deadline, while a side still has to act", "the sides still to act", true, "that deadline"},
	{"deadline_missed", "the join, answer or record-confirmation deadline passed without the act", "both", false, "—"},
	{"representative_appointed", "a side appoints a representative", "both", false, "—"},
	{"representative_changed", "a side changes a representative's label", "both", false, "—"},
	{"representative_removed", "a side removes a representative, whose authority ends at once", "both", false, "—"},
	{"respondent_link_reissued", "the claimant's partner reissues the hosted respondent's sign-in link (the old link stops working; open sessions stay)", "claimant's", false, "—"},
	{"evidence_export_ready", "the record closed: the export of each side's evidence is ready (one event per side, in the same step as `record_confirmed`)", "the exported side's", false, "—"},
}

// The examples are signed with key A of the published conformance vectors
// (docs/webhook-signature-vectors.json, whose seed is public on purpose),
// never with a live key: a live signature over a made-up event would be a
// callback anyone could replay to a partner's receiver within the
// timestamp window, and signing on request would make the service a
// signing oracle. An example therefore verifies against the vectors' key
// set, and against the live JWKS it fails at the key id step, which is the
// point: it can never pass for a delivery.
var (
	exampleKeySeed = sha256.Sum256([]byte("pcourt webhook conformance key A"))
	exampleKey     = ed25519.NewKeyFromSeed(exampleKeySeed[:])
	// ExampleSignedAt is the moment every example is signed at: set the
	// Verify page's clock to it to check one.
	ExampleSignedAt = time.Date(2026, 11, 23, 10, 15, 30, 0, time.UTC)
)

// exampleKeyID is conformance key A's kid, which says its seed is public.
const exampleKeyID = "conformance-key-a.seed-is-public.not-a-real-key"

// ExampleEndpointID is the endpoint every example is signed for: give it
// as the endpoint id on the Verify page to check one.
const ExampleEndpointID = "we_example"

// ExampleEndpointID is offered on the Verify page, for the examples.
func (keysView) ExampleEndpointID() string { return ExampleEndpointID }

// exampleSigner returns the conformance key A signer and its key id.
func exampleSigner() (*signature.Signer, error) {
	return signature.NewSigner(exampleKeyID, exampleKey)
}

// exampleBody is the case-event-v2 body of an example of ev, sequence seq,
// member order as the webhooks service sends it.
type exampleBody struct {
	SchemaVersion  string `json:"schemaVersion"`
	EventID        string `json:"eventId"`
	DeliveryID     string `json:"deliveryId"`
	Sequence       int    `json:"sequence"`
	Type           string `json:"type"`
	OccurredAt     string `json:"occurredAt"`
	CaseID         string `json:"caseId"`
	ExternalCaseID string `json:"externalCaseId"`
	ActionRequired bool   `json:"actionRequired"`
	DeadlineAt     string `json:"deadlineAt,omitempty"`
}

type catalogueEntry struct {
	eventDoc
	Headers []header
	Body    string
}

type catalogueView struct {
	Entries   []catalogueEntry
	KeyID     string
	SignedAt  time.Time
	Published string // the key set that verifies the examples, as JSON
}

// exampleCatalogue builds every type's signed example request, the same
// bytes each time.
func exampleCatalogue() (catalogueView, error) {
	signer, err := exampleSigner()
	if err != nil {
		return catalogueView{}, err
	}
	jwks, err := signature.MarshalJWKS(signer.JWK())
	if err != nil {
		return catalogueView{}, err
	}
	v := catalogueView{KeyID: signer.KeyID(), SignedAt: ExampleSignedAt, Published: string(jwks)}
	occurred := ExampleSignedAt.Add(-30 * time.Second)
	for i, d := range slices.Concat(eventDocs, decisionEventDocs, evidenceEventDocs, afterAwardEventDocs, settlementEventDocs) {
		b := exampleBody{SchemaVersion: "case-event-v2", EventID: fmt.Sprintf("case-event:case_example:%d", i+1),
			DeliveryID: "dlv_example_" + d.Type, Sequence: i + 1, Type: d.Type, OccurredAt: occurred.Format("2006-01-02T15:04:05.000Z"),
			CaseID: "case_example", ExternalCaseID: "partner-order-example", ActionRequired: d.ActionRequired}
		if d.Deadline != "—" {
			b.DeadlineAt = ExampleSignedAt.Add(7 * 24 * time.Hour).Format("2006-01-02T15:04:05.000Z")
		}
		body, err := json.Marshal(b)
		if err != nil {
			return catalogueView{}, err
		}
		// An example shows a case fact's delivery (x-pc-test: false); signed
		// with a key whose seed is public, it can never pass for one.
		h, err := signer.Sign(body, b.EventID, signature.Recipient{EndpointID: ExampleEndpointID}, ExampleSignedAt)
		if err != nil {
			return catalogueView{}, err
		}
		hh := h.HTTPHeader()
		hh.Set("Content-Type", "application/json")
		hh.Set("User-Agent", "pcourt-webhooks/1")
		var headers []header
		for name := range hh {
			headers = append(headers, header{strings.ToLower(name), hh.Get(name)})
		}
		sort.Slice(headers, func(i, j int) bool { return headers[i].Name < headers[j].Name })
		v.Entries = append(v.Entries, catalogueEntry{eventDoc: d, Headers: headers, Body: string(body)})
	}
	return v, nil
}

// catalogue is the event catalogue page: every case event type of the
// published schema with when it is sent and a fully signed example request.
func (cs *Console) catalogue(c *gin.Context, s *session) {
	v, err := exampleCatalogue()
	if err != nil {
		cs.fail(c, s, err)
		return
	}
	cs.render(c, http.StatusOK, "events", cs.frame(c, s, "events", v))
}

// decisionEventDocs is the events table of docs/tribunal.md (the cases
// service's tribunal.EventSpecs in words): the decision's events, held
// equal to the document by TestTheDecisionEventsAreTheTribunalTable.
// Recipients is the audience; a deadline is carried where the page says.
var decisionEventDocs = []eventDoc{
	{"tribunal_assigned", "an adjudicator and a reviewer are assigned (a settled case: the reviewer alone), or one is replaced (recusal, upheld challenge); the pinned configuration is in the case", "both sides and the tribunal", false, "—"},
	{"ai_configuration_challenged", "a side challenges the adjudicator's configuration", "the other side and the reviewer", false, "—"},
	{"ai_configuration_challenge_resolved", "the reviewer upholds (new adjudicator, the run restarts) or dismisses a challenge", "both sides and the tribunal", false, "—"},
	{"adjudication_requested", "a run opens: the record closed, the reviewer objected, resumed or asked again, or a challenge was upheld", "the adjudicator", true, "—"},
	{"proposal_filed", "the adjudicator filed its proposal", "the reviewer", true, "—"},
	{"human_attention_needed", "the adjudicator asked for a human instead of proposing", "the reviewer", true, "—"},
	{"human_attention_resumed", "the reviewer resumed the case with instructions", "the tribunal", false, "—"},
	{"pre_award_review_opened", "the reviewer shows both sides the dispositive part before signing", "both sides and the tribunal", true, "the pre-award review's deadline"},
	{"pre_award_review_closed", "both sides answered the pre-award review, or its window ended", "the tribunal", false, "—"},
	{"procedural_ruling_issued", "the reviewer issued a procedural ruling", "both sides and the tribunal", false, "—"},
	{"award_issued", "the reviewer signed off, an evaluation was accepted, or the reviewer recorded the sides' settlement (a consent award): the award is issued", "the sides the award orders to act", true, "—"},
	{"award_issued", "the same award, to the sides it orders nothing", "the sides the award orders nothing", false, "—"},
	{"evaluation_issued", "the reviewer signed off an evaluation that the sides accept before it is the award", "both sides and the tribunal", true, "under review policy on_request, when it is deemed accepted"},
	{"evaluation_accepted", "a side accepted the evaluation (or it was deemed accepted)", "both sides and the tribunal", false, "—"},
}

// evidenceEventDocs is the events table of docs/evidence.md (the cases
// service's evidence.EventSpecs in words): the evidence's events, every one
// to both sides and the tribunal, held equal to the document by
// TestTheEvidenceEventsAreTheEvidenceTable.
var evidenceEventDocs = []eventDoc{
	{"evidence_disclosed", "a side disclosed one of its exhibits: it is in the record and the other side may read it", "both sides and the tribunal", false, "—"},
	{"exhibit_description_changed", "the offering side edited a disclosed exhibit's description", "both sides and the tribunal", false, "—"},
	{"authenticity_challenged", "the other side challenged a disclosed exhibit's authenticity, with grounds; the offering side answers", "both sides and the tribunal", true, "—"},
	{"authenticity_challenge_answered", "the offering side answered a challenge; the tribunal resolves it", "both sides and the tribunal", true, "—"},
	{"authenticity_challenge_resolved", "the tribunal resolved a challenge: the exhibit is authentic or not", "both sides and the tribunal", false, "—"},
	{"processing_defect_reported", "a side reported a defect in an exhibit's processing record; the tribunal resolves it", "both sides and the tribunal", true, "—"},
	{"processing_defect_resolved", "the tribunal resolved a defect report: corrected or rejected", "both sides and the tribunal", false, "—"},
}

// evidenceTableRows renders evidenceEventDocs as the rows of the table of
// docs/evidence.md, for the test that holds them equal.
func evidenceTableRows() []string {
	out := make([]string, 0, len(evidenceEventDocs))
	for _, d := range evidenceEventDocs {
		out = append(out, fmt.Sprintf("| `%s` | %s | %t |", d.Type, d.When, d.ActionRequired))
	}
	return out
}

// decisionTableRows renders decisionEventDocs as the rows of the table of
// docs/tribunal.md, for the test that holds them equal.
func decisionTableRows() []string {
	out := make([]string, 0, len(decisionEventDocs))
	for _, d := range decisionEventDocs {
		out = append(out, fmt.Sprintf("| `%s` | %s | %s | %t |", d.Type, d.When, d.Recipients, d.ActionRequired))
	}
	return out
}

// eventTableRows renders eventDocs as the rows of the docs table, for the
// test that holds them equal.
func eventTableRows() []string {
	out := make([]string, 0, len(eventDocs))
	for _, d := range eventDocs {
		out = append(out, fmt.Sprintf("| `%s` | %s | %s | %t | %s |", d.Type, d.When, d.Recipients, d.ActionRequired, d.Deadline))
	}
	return out
}

// afterAwardEventDocs is the events table of docs/after-award.md (the
// cases service's afteraward.EventSpecs in words), held equal to the
// document by TestTheAfterAwardEventsAreTheAfterAwardTable.
var afterAwardEventDocs = []eventDoc{
	{"post_award_recourse_waived", "a side waived its post-award recourse (the consent control)", "the other side and the reviewer", false, "—"},
	{"post_award_requested", "a side asked for a correction, an interpretation or an additional award; the reviewer decides", "the other side and the reviewer", true, "—"},
	{"post_award_request_decided", "the reviewer granted or denied a post-award request", "both sides and the tribunal", false, "—"},
	{"award_amended", "a granted request issued a new award naming the one it amends (corrects); the new one is served", "both sides and the tribunal", false, "—"},
	{"award_final", "the served award became final: its request and appeal windows lapsed with nothing pending, every side waived its recourse, an appeal was decided, or it is a consent award (final on issue)", "both sides and the tribunal", false, "—"},
	{"appeal_filed", "a side appealed the award; its fee is quoted (paid with x402 before the briefing) or invoiced", "both sides and the tribunal", false, "—"},
	{"appeal_briefing_opened", "an appeal's fee was paid or invoiced: the other side may answer until the answer deadline", "both sides and the tribunal", true, "—"},
	{"appeal_answered", "the other side answered the appeal", "the other side and the reviewer", false, "—"},
	{"appeal_briefing_closed", "the appellate reviewer closed the appeal's briefing and decides", "both sides and the tribunal", false, "—"},
	{"appeal_decided", "the appellate reviewer affirmed, modified or set aside the award: the appellate award is served, naming the appealed one (corrects)", "both sides and the tribunal", false, "—"},
	{"appeal_lapsed", "an appeal's fee was not paid by its due date; the appeal lapsed", "both sides and the tribunal", false, "—"},
	{"execution_requested", "a side commanded an execution of the final award on a rail", "both sides", false, "—"},
	{"execution_completed", "an execution completed, with its evidence (a settled transfer or the party's report)", "both sides", false, "—"},
	{"execution_failed", "an execution's attempt failed; the same command tries again", "both sides", true, "—"},
}

// afterAwardTableRows renders afterAwardEventDocs as the rows of the table
// of docs/after-award.md, for the test that holds them equal.
func afterAwardTableRows() []string {
	out := make([]string, 0, len(afterAwardEventDocs))
	for _, d := range afterAwardEventDocs {
		out = append(out, fmt.Sprintf("| `%s` | %s | %s | %t |", d.Type, d.When, d.Recipients, d.ActionRequired))
	}
	return out
}

// settlementEventDocs is the events table of docs/settlement.md (the
// cases service's settlement.EventSpecs in words), held equal to the
// document by TestTheSettlementEventsAreTheSettlementTable.
var settlementEventDocs = []eventDoc{
	{"settlement_proposed", "a side proposed settlement terms (replacing a pending proposal); the other side may accept them by their digest", "the other side", true, "—"},
	{"settlement_withdrawn", "a side withdrew its pending proposal", "the other side", false, "—"},
	{"settlement_agreed", "the other side accepted the proposed terms by their digest: the case is settled", "both sides", false, "—"},
	{"settlement_agreed", "the same agreement, to the tribunal assigned: the reviewer records the terms as a consent award; a run not used ends", "the tribunal", true, "—"},
}

// settlementTableRows renders settlementEventDocs as the rows of the table
// of docs/settlement.md, for the test that holds them equal.
func settlementTableRows() []string {
	out := make([]string, 0, len(settlementEventDocs))
	for _, d := range settlementEventDocs {
		out = append(out, fmt.Sprintf("| `%s` | %s | %s | %t |", d.Type, d.When, d.Recipients, d.ActionRequired))
	}
	return out
}
