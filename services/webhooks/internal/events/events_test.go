package events_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

var (
	t0     = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	acme   = endpoints.Scope{Tenant: "t1", Environment: "live", PartnerID: "acme"}
	globex = endpoints.Scope{Tenant: "t1", Environment: "live", PartnerID: "globex"}
)

const body = `{"schemaVersion":"case-event-v2","eventId":"evt_1","sequence":3,"type":"case.opened","occurredAt":"2026-11-23T12:00:00.000Z","caseId":"case_1","externalCaseId":"ext-1","actionRequired":false}`

func envelope(recipients ...endpoints.Scope) []byte {
	rs := make([]events.Recipient, 0, len(recipients))
	for _, r := range recipients {
		rs = append(rs, events.Recipient{Tenant: r.Tenant, Environment: r.Environment, PartnerID: r.PartnerID})
	}
	b, _ := json.Marshal(events.Envelope{SchemaVersion: events.EnvelopeSchema, Recipients: rs, Event: json.RawMessage(body)})
	return b
}

type fixture struct {
	eps *store.Endpoints
	dlv *store.Deliveries
	fan *events.Fanout
	ctx context.Context
}

func newFixture(t *testing.T) *fixture {
	rdb := redistest.NewClient(t)
	f := &fixture{eps: store.NewEndpoints(rdb), dlv: store.NewDeliveries(rdb, store.DefaultDeliveriesConfig()), ctx: context.Background()}
	f.fan = &events.Fanout{Endpoints: f.eps, Deliveries: f.dlv, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return t0 }}
	add := func(id string, scope endpoints.Scope, types []string, disabled bool) {
		e := endpoints.New(id, scope, endpoints.Registration{URL: "https://h.example/" + id, EventTypes: types}, t0)
		if disabled {
			e = endpoints.Disable(e, t0)
		}
		require.NoError(t, f.eps.Create(f.ctx, e))
	}
	add("we_all", acme, nil, false)
	add("we_opened", acme, []string{"case.opened"}, false)
	add("we_other_type", acme, []string{"award.issued"}, false)
	add("we_disabled", acme, nil, true)
	add("we_globex", globex, nil, false)
	return f
}

func (f *fixture) deliveries(t *testing.T, scope endpoints.Scope) []string {
	t.Helper()
	list, _, err := f.dlv.List(f.ctx, scope, store.Filter{}, nil, 100)
	require.NoError(t, err)
	var out []string
	for _, d := range list {
		out = append(out, d.EndpointID)
	}
	return out
}

func TestFanoutMakesOneDeliveryPerSubscribedEnabledEndpoint(t *testing.T) {
	f := newFixture(t)
	msg := kafka.Message{Schema: events.EnvelopeSchema, EventID: "evt_1", Value: envelope(acme)}
	require.NoError(t, f.fan.Handle(f.ctx, msg))
	require.NoError(t, f.fan.Handle(f.ctx, msg), "a redelivered record")
	assert.ElementsMatch(t, []string{"we_all", "we_opened"}, f.deliveries(t, acme))
	assert.Empty(t, f.deliveries(t, globex), "globex was not a recipient")

	d, err := f.dlv.Get(f.ctx, acme, events.DeliveryID("evt_1", "we_all"))
	require.NoError(t, err)
	assert.JSONEq(t, body, string(d.Event.Body("")))
	assert.Equal(t, store.StatusScheduled, d.Status)
	claimed, err := f.dlv.Claim(f.ctx, 0, t0, time.Minute, 100, "tok")
	require.NoError(t, err)
	for n := 1; n < f.dlv.Shards(); n++ {
		more, err := f.dlv.Claim(f.ctx, n, t0, time.Minute, 100, "tok")
		require.NoError(t, err)
		claimed = append(claimed, more...)
	}
	assert.Len(t, claimed, 2, "both are due at once")
}

func TestFanoutRefusesInvalidRecords(t *testing.T) {
	f := newFixture(t)
	for name, msg := range map[string]kafka.Message{
		"wrong schema header": {Schema: "other", Value: envelope(acme)},
		"event id mismatch":   {Schema: events.EnvelopeSchema, EventID: "evt_2", Value: envelope(acme)},
		"not json":            {Schema: events.EnvelopeSchema, Value: []byte("{")},
		"extra member":        {Schema: events.EnvelopeSchema, Value: []byte(`{"schemaVersion":"cases-event-envelope-v2","recipients":[],"event":` + body + `,"x":1}`)},
		"delivery id present": {Schema: events.EnvelopeSchema, Value: []byte(`{"schemaVersion":"cases-event-envelope-v2","recipients":[],"event":{"schemaVersion":"case-event-v2","eventId":"e","deliveryId":"d","sequence":1,"type":"t","occurredAt":"2026-11-23T12:00:00.000Z","caseId":"c","externalCaseId":"x","actionRequired":true}}`)},
		"bad instant":         {Schema: events.EnvelopeSchema, Value: []byte(`{"schemaVersion":"cases-event-envelope-v2","recipients":[],"event":{"schemaVersion":"case-event-v2","eventId":"e","sequence":1,"type":"t","occurredAt":"2026-11-23T12:00:00Z","caseId":"c","externalCaseId":"x","actionRequired":true}}`)},
	} {
		t.Run(name, func(t *testing.T) {
			err := f.fan.Handle(f.ctx, msg)
			assert.ErrorIs(t, err, events.ErrInvalidEvent)
			assert.True(t, kafka.IsPermanent(err), "an invalid record can never succeed: dead-lettered at once, not retried")
		})
	}
	assert.Empty(t, f.deliveries(t, acme))
}

func TestBodyKeepsTheFieldOrder(t *testing.T) {
	ev, err := events.ParseBody([]byte(body))
	require.NoError(t, err)
	out := ev.Body("dlv_x")
	assert.Equal(t, `{"schemaVersion":"case-event-v2","eventId":"evt_1","deliveryId":"dlv_x","sequence":3,"type":"case.opened","occurredAt":"2026-11-23T12:00:00.000Z","caseId":"case_1","externalCaseId":"ext-1","actionRequired":false}`, string(out))
}

func TestConsumerSchedulesBeforeCommitting(t *testing.T) {
	f := newFixture(t)
	brokers := kafkatest.StartBroker(t)
	kafkatest.CreateTopic(t, brokers, events.Topic, 1)
	kafkatest.CreateTopic(t, brokers, events.Topic+".dlq", 1)
	prod, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers})
	require.NoError(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	for i := range 2 { // the same event twice, as an at-least-once relay may
		require.NoError(t, prod.Publish(f.ctx, kafka.Message{Topic: events.Topic, Key: "case_1", EventID: "evt_1", Schema: events.EnvelopeSchema, Value: envelope(acme, globex)}), "publish %d", i)
	}
	cons, err := kafka.NewConsumer(kafka.ConsumerConfig{Brokers: brokers, GroupID: "webhooks", Topic: events.Topic}, f.fan.Handle, prod, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- cons.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	require.Eventually(t, func() bool { return len(f.deliveries(t, globex)) > 0 }, 20*time.Second, 20*time.Millisecond,
		"no delivery for globex")
	assert.ElementsMatch(t, []string{"we_all", "we_opened"}, f.deliveries(t, acme))
	assert.Equal(t, []string{"we_globex"}, f.deliveries(t, globex))
}
