package kafka_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

func TestPing(t *testing.T) {
	brokers := kafkatest.StartBroker(t)

	// silent accepts connections and never answers, like a hung broker.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = conn.Close() })
		}
	}()

	tests := []struct {
		name    string
		brokers []string
		wantErr string
	}{
		{"live broker", brokers, ""},
		{"dead seed then live broker", []string{closedAddr(t), brokers[0]}, ""},
		{"closed port", []string{closedAddr(t)}, "connection refused"},
		{"silent broker", []string{silent.Addr().String()}, "reading metadata"},
		{"no brokers", nil, "no brokers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const bound = 500 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			start := time.Now()
			err := kafka.Ping(ctx, tt.brokers, kafka.Security{})
			assert.Less(t, time.Since(start), bound+time.Second, "Ping outlived its ctx")
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
