package events_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

const schemaBase = "https://pcourt.dev/schemas/events/"

// schemas compiles the published schemas of api/events.
func schemas(t testing.TB) (body, envelope *jsonschema.Schema) {
	t.Helper()
	c := jsonschema.NewCompiler()
	for _, name := range []string{"case-event-v2.schema.json", "cases-event-envelope-v2.schema.json"} {
		raw, err := api.EventSchema(name)
		require.NoError(t, err)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		require.NoError(t, err)
		require.NoError(t, c.AddResource(schemaBase+name, doc))
	}
	body, err := c.Compile(schemaBase + "case-event-v2.schema.json")
	require.NoError(t, err)
	envelope, err = c.Compile(schemaBase + "cases-event-envelope-v2.schema.json")
	require.NoError(t, err)
	return body, envelope
}

func validate(t testing.TB, s *jsonschema.Schema, doc []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	require.NoError(t, err)
	return s.Validate(v)
}

// record does in Go what the store's Lua step does with an encoded event.
func record(e store.Event, caseID string, seq int64) (body, envelope []byte) {
	id := store.EventID(caseID, seq)
	body = append(append(append(append(append([]byte{}, e.BodyHead...), id...), `","sequence":`...), strconv.FormatInt(seq, 10)...), e.BodyTail...)
	envelope = append(append(append([]byte{}, e.EnvelopeHead...), body...), e.EnvelopeTail...)
	return body, envelope
}

// WithDeliveryID adds a deliveryId as the webhooks service does.
func withDeliveryID(t testing.TB, body []byte) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	m["deliveryId"] = "dlv_1"
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// openFixture opens the case of a case-opened fixture, after checking the
// fixture is the published schema's (a member added within the version,
// someFutureField, aside: the decoder must ignore it).
func openFixture(t testing.TB, name string) procedure.Outcome {
	t.Helper()
	payload, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(payload, &m))
	delete(m, "someFutureField")
	published, err := json.Marshal(m)
	require.NoError(t, err)
	apitest.Event(t, api.CaseOpenedSchema+".schema.json", published)
	in, err := events.DecodeOpened(payload)
	require.NoError(t, err)
	out, err := procedure.Open(in)
	require.NoError(t, err)
	return out
}

func TestEncodedEventsMatchThePublishedSchemas(t *testing.T) {
	bodySchema, envelopeSchema := schemas(t)
	out := openFixture(t, "case-opened-today.json")
	c := out.Case
	invited, err := procedure.Decide(c, procedure.Act{Kind: procedure.ActInviteRespondent, ParticipantID: "p1", InvitationHash: "5555555555555555555555555555555555555555555555555555555555555555"}, c.OpenedAt.Add(time.Minute))
	require.NoError(t, err)
	all := append(out.Events, invited.Events...)
	for i, ev := range all {
		enc, err := events.Encode(c, ev)
		require.NoError(t, err)
		body, envelope := record(enc, c.ID, int64(i+1))
		require.NoError(t, validate(t, envelopeSchema, envelope), "%s", envelope)
		require.Error(t, validate(t, bodySchema, body), "without deliveryId the body is not yet a callback body")
		require.NoError(t, validate(t, bodySchema, withDeliveryID(t, body)), "%s", body)

		var env events.Envelope
		require.NoError(t, json.Unmarshal(envelope, &env))
		var b events.Body
		require.NoError(t, json.Unmarshal(env.Event, &b))
		require.Equal(t, int64(i+1), b.Sequence)
		require.Equal(t, "case-event:case_0001:"+strconv.Itoa(i+1), b.EventID)
		require.Equal(t, string(ev.Type), b.Type)
		require.Equal(t, "ext-77", b.ExternalCaseID)
	}
	var first events.Body
	body, _ := record(mustEncode(t, c, out.Events[0]), c.ID, 1)
	require.NoError(t, json.Unmarshal(body, &first))
	require.Equal(t, "2026-11-20T10:00:00.123Z", first.OccurredAt)
	require.Equal(t, "2026-12-04T10:00:00.123Z", first.DeadlineAt, "opened carries the join deadline")
}

func mustEncode(t testing.TB, c procedure.Case, ev procedure.Event) store.Event {
	t.Helper()
	e, err := events.Encode(c, ev)
	require.NoError(t, err)
	return e
}

func TestSchemasRefuseExtraPropertiesAndBadInstants(t *testing.T) {
	bodySchema, envelopeSchema := schemas(t)
	good := `{"schemaVersion":"case-event-v2","eventId":"e:1","deliveryId":"d","sequence":1,"type":"opened","occurredAt":"2026-11-20T10:00:00.000Z","caseId":"c","externalCaseId":"x","actionRequired":false}`
	require.NoError(t, validate(t, bodySchema, []byte(good)))
	for name, doc := range map[string]string{
		"extra property":   `{"schemaVersion":"case-event-v2","eventId":"e:1","deliveryId":"d","sequence":1,"type":"opened","occurredAt":"2026-11-20T10:00:00.000Z","caseId":"c","externalCaseId":"x","actionRequired":false,"status":"open"}`,
		"two fractional":   `{"schemaVersion":"case-event-v2","eventId":"e:1","deliveryId":"d","sequence":1,"type":"opened","occurredAt":"2026-11-20T10:00:00.00Z","caseId":"c","externalCaseId":"x","actionRequired":false}`,
		"offset not Z":     `{"schemaVersion":"case-event-v2","eventId":"e:1","deliveryId":"d","sequence":1,"type":"opened","occurredAt":"2026-11-20T10:00:00.000+00:00","caseId":"c","externalCaseId":"x","actionRequired":false}`,
		"sequence zero":    `{"schemaVersion":"case-event-v2","eventId":"e:1","deliveryId":"d","sequence":0,"type":"opened","occurredAt":"2026-11-20T10:00:00.000Z","caseId":"c","externalCaseId":"x","actionRequired":false}`,
		"bad event id":     `{"schemaVersion":"case-event-v2","eventId":"e 1","deliveryId":"d","sequence":1,"type":"opened","occurredAt":"2026-11-20T10:00:00.000Z","caseId":"c","externalCaseId":"x","actionRequired":false}`,
		"unknown type":     `{"schemaVersion":"case-event-v2","eventId":"e:1","deliveryId":"d","sequence":1,"type":"exploded","occurredAt":"2026-11-20T10:00:00.000Z","caseId":"c","externalCaseId":"x","actionRequired":false}`,
		"missing required": `{"schemaVersion":"case-event-v2","eventId":"e:1","deliveryId":"d","sequence":1,"type":"opened","caseId":"c","externalCaseId":"x","actionRequired":false}`,
	} {
		require.Error(t, validate(t, bodySchema, []byte(doc)), name)
	}
	require.Error(t, validate(t, envelopeSchema, []byte(`{"schemaVersion":"cases-event-envelope-v2","recipients":[],"event":{},"extra":1}`)))
}

func TestEventTypesOfTheProcedureAndTheDecisionAreInTheSchema(t *testing.T) {
	bodySchema, _ := schemas(t)
	var types []string
	for _, spec := range procedure.EventSpecs {
		types = append(types, string(spec.Type))
	}
	for _, spec := range tribunal.EventSpecs {
		types = append(types, string(spec.Type))
	}
	for _, spec := range evidence.EventSpecs {
		types = append(types, string(spec.Type))
	}
	for _, spec := range afteraward.EventSpecs {
		types = append(types, string(spec.Type))
	}
	for _, spec := range settlement.EventSpecs {
		types = append(types, string(spec.Type))
	}
	for _, typ := range types {
		doc := `{"schemaVersion":"case-event-v2","eventId":"e:1","deliveryId":"d","sequence":1,"type":"` + typ + `","occurredAt":"2026-11-20T10:00:00.000Z","caseId":"c","externalCaseId":"x","actionRequired":true}`
		require.NoError(t, validate(t, bodySchema, []byte(doc)), typ)
	}
}

func TestDecodeTodaysCaseOpened(t *testing.T) {
	out := openFixture(t, "case-opened-today.json")
	c := out.Case
	require.Equal(t, "case_0001", c.ID)
	require.Equal(t, "ext-77", c.ExternalID)
	require.Equal(t, procedure.Rules{Version: "pcourt-rules-2026-11", Hash: "1111111111111111111111111111111111111111111111111111111111111111"}, c.Rules)
	require.Equal(t, procedure.StatusAwaitingRespondent, c.Status(), "the respondent did not confirm the draft")
	require.Equal(t, "fee_0001", c.FeeID)
	require.Equal(t, "quoted", c.FeeStatus)
	require.Equal(t, "3333333333333333333333333333333333333333333333333333333333333333", c.Capabilities[procedure.CapabilityRespondentInvite])
	require.Equal(t, []procedure.Partner{{Tenant: "t1", Environment: "sandbox", PartnerID: "partner-c"}}, c.Recipients[procedure.Claimant])
	require.Equal(t, []procedure.Partner{{Tenant: "t1", Environment: "sandbox", PartnerID: "partner-r"}}, c.Recipients[procedure.Respondent])
	require.Equal(t, "partner-c", c.Participants[0].PartnerID)
	require.Equal(t, "partner-r", c.Participants[1].PartnerID)
}

func TestDecodeTheRicherCaseOpened(t *testing.T) {
	out := openFixture(t, "case-opened-richer.json")
	c := out.Case
	require.Equal(t, "case_0002", c.ID)
	require.Equal(t, procedure.StatusEvidence, c.Status(), "both joined, fast plan has no answer")
	require.Equal(t, []procedure.Partner{{Tenant: "t2", Environment: "live", PartnerID: "partner-r"}}, c.Recipients[procedure.Respondent], "the recipients as the fact names them")
	require.Equal(t, "paid", c.FeeStatus)
	require.Equal(t, []procedure.EventType{procedure.EventOpened, procedure.EventStageOpened}, []procedure.EventType{out.Events[0].Type, out.Events[1].Type})
}

func TestDecodeRefusesWhatCanNeverOpen(t *testing.T) {
	_, err := events.DecodeOpened([]byte(`{"eventId":`))
	require.ErrorIs(t, err, events.ErrUndecodable)
	_, err = events.DecodeOpened([]byte(`{"eventId":"case-opened:x","tenant":"t"}`))
	require.ErrorIs(t, err, events.ErrUndecodable, "no procedure plan")
	// Version 1 nested the case under "case"; no published schema has it,
	// so its plan is not read.
	_, err = events.DecodeOpened([]byte(`{"eventId":"case-opened:x","tenant":"t","case":{"caseId":"x","procedure":{"profile":"standard","evidenceRounds":1,"filingsPerSidePerStage":1,"recordConfirmationRequired":true}}}`))
	require.ErrorIs(t, err, events.ErrUndecodable, "a plan nested under case")
}

// The fact filings publishes (filings-case-opened-v2, as its own tests
// produce it) opens the case it describes: the fixture matches the
// published schema, and every fact the cases service needs is read from
// the top level.
func TestCaseOpenedV2OpensTheCaseItDescribes(t *testing.T) {
	payload, err := os.ReadFile("testdata/case-opened-v2.json")
	require.NoError(t, err)
	apitest.Event(t, "filings-case-opened-v2.schema.json", payload)

	in, err := events.DecodeOpened(payload)
	require.NoError(t, err)
	require.Equal(t, "cs_0003", in.CaseID)
	require.Equal(t, "partner-case-42", in.ExternalID)
	require.Equal(t, procedure.Rules{Version: "pcourt-rules-2026-11", Hash: strings.Repeat("1", 64)}, in.Rules)
	require.Equal(t, 2, in.Plan.EvidenceRounds)
	require.Equal(t, "fee_0003", in.FeeID)
	require.Equal(t, "quoted", in.FeeStatus)
	require.Equal(t, []procedure.Partner{{Tenant: "tenant-a", Environment: "sandbox", PartnerID: "partner-b"}}, in.Recipients[procedure.Respondent])
	require.Len(t, in.Participants, 2)
	for _, p := range in.Participants {
		require.False(t, p.JoinedAt.IsZero(), "%s takes part from the opening", p.ID)
	}
	require.Len(t, in.Capabilities, 2)
	_, err = procedure.Open(in)
	require.NoError(t, err)
}
