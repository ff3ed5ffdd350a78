package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

// A case filings opens is published on pc.filings.case-opened.v1; until
// the consumer has applied it, the case answers 404 case_not_found_or_opening
// with Retry-After, and then it is readable and the journey goes on.
// Kafka is kfake speaking the wire protocol.
func TestACaseOpenedOnKafkaBecomesReadable(t *testing.T) {
	s := newStack(t)
	brokers := kafkatest.StartBroker(t)
	kafkatest.CreateTopic(t, brokers, api.CaseOpenedTopic, 2)
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers})
	require.NoError(t, err)
	t.Cleanup(func() { _ = producer.Close() })

	id, invite := "cs_from_kafka", auth.NewToken("pc_inv_")
	rep := s.do(t, http.MethodGet, "/api/cases/"+id, s.claimant, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status)
	require.Equal(t, "case_not_found_or_opening", rep.code)
	require.Equal(t, "1", rep.header.Get("Retry-After"))

	require.NoError(t, producer.Publish(context.Background(), kafka.Message{
		Topic: api.CaseOpenedTopic, Key: id, EventID: "case-opened:" + id, Schema: api.CaseOpenedSchema,
		Value: caseOpened(id, invite, time.Now()),
	}))
	consumer, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: brokers, GroupID: "cases-case-opened", Topic: api.CaseOpenedTopic, StartOffset: kafka.FirstOffset,
		HeartbeatInterval: 200 * time.Millisecond, SessionTimeout: 6 * time.Second, RebalanceTimeout: 2 * time.Second,
	}, s.opened.Handle, producer, s.logger, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- consumer.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	require.Eventually(t, func() bool {
		return s.do(t, http.MethodGet, "/api/cases/"+id, s.claimant, "", nil).status == http.StatusOK
	}, kafkatest.Timeout, 20*time.Millisecond, "the case becomes readable once the consumer applied it")

	// The secret filings showed at opening lets the respondent's agent in.
	rep = s.do(t, http.MethodPost, "/api/partner-cases/"+id+"/respondent", s.respondentAgent, newKey(), nil, auth.CapabilityHeader, invite)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, []string{"opened", "respondent_joined", "stage_opened"}, s.docketTypes(t, id))
}
