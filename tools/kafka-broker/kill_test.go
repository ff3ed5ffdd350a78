package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

// childEnv makes the test binary run the broker's main instead of the
// tests, so a test can SIGKILL a real broker process.
const childEnv = "KAFKA_BROKER_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// startBrokerProcess runs the broker as a child process on port with dir
// as its data directory and waits until it listens.
func startBrokerProcess(t *testing.T, port, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1",
		"KAFKA_LISTEN_ADDR=127.0.0.1:"+port, "KAFKA_ADVERTISED_ADDR=127.0.0.1:"+port, "KAFKA_DATA_DIR="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if strings.Contains(lines.Text(), "listening on") {
			go func() {
				for lines.Scan() {
				}
			}()
			return cmd
		}
	}
	t.Fatalf("the broker exited before listening: %v", lines.Err())
	return nil
}

// A broker killed with SIGKILL while producers write keeps, after its
// restart on the same data directory, every record it acknowledged, and
// every partition reads to its end.
func TestBrokerKilledMidProduceKeepsWhatItAcknowledged(t *testing.T) {
	declared := kafka.Topics[0]
	port, dir, topic := freePort(t), t.TempDir(), declared.Name
	addr := "127.0.0.1:" + port
	broker := startBrokerProcess(t, port, dir)
	// The topic is a declared one, created by the broker at its start.

	var (
		mu    sync.Mutex
		acked []string
	)
	ctx, stop := context.WithCancel(context.Background())
	var producers sync.WaitGroup
	for p := range 4 {
		producers.Go(func() {
			w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: topic, RequiredAcks: kafkago.RequireAll,
				Balancer: &kafkago.RoundRobin{}, BatchTimeout: time.Millisecond, MaxAttempts: 1}
			defer w.Close()
			for i := 0; ctx.Err() == nil; i++ {
				v := fmt.Sprintf("p%d-%06d", p, i)
				if w.WriteMessages(ctx, kafkago.Message{Key: []byte(v), Value: []byte(v),
					Headers: []kafkago.Header{{Key: "pc-event-id", Value: []byte(v)}}}) == nil {
					mu.Lock()
					acked = append(acked, v)
					mu.Unlock()
				}
			}
		})
	}
	// A consumer group reads along and commits, as the services' do, so
	// that after the restart it resumes at the partitions' last offsets.
	groupCtx, stopGroup := context.WithCancel(context.Background())
	var group sync.WaitGroup
	group.Go(func() {
		r := groupReader(addr, topic, t)
		defer r.Close()
		for groupCtx.Err() == nil {
			if _, err := r.ReadMessage(groupCtx); err != nil {
				// The broker is away: kafka-go reconnects; back off.
				select {
				case <-groupCtx.Done():
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	})
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 400 }, kafkatest.Timeout, 10*time.Millisecond)
	require.NoError(t, broker.Process.Signal(syscall.SIGKILL))
	_ = broker.Wait()
	stop()
	producers.Wait()
	stopGroup()
	group.Wait()

	startBrokerProcess(t, port, dir)
	// Producers carry on after the restart: what they append now must be
	// readable too.
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: topic, RequiredAcks: kafkago.RequireAll,
		Balancer: &kafkago.RoundRobin{}, BatchTimeout: time.Millisecond}
	defer w.Close()
	// Right after the restart a partition's leader may be on another of
	// the three brokers than the metadata a writer first reads says: a
	// write refused with "not leader" is sent again, as every producer
	// (the outbox relay's included) does, until it is acknowledged.
	for i := range 40 {
		v := fmt.Sprintf("after-%03d", i)
		require.Eventually(t, func() bool {
			err := w.WriteMessages(context.Background(), kafkago.Message{Key: []byte(v), Value: []byte(v),
				Headers: []kafkago.Header{{Key: "pc-event-id", Value: []byte(v)}}})
			return err == nil
		}, kafkatest.Timeout, 50*time.Millisecond, "%s was never acknowledged after the restart", v)
		acked = append(acked, v)
	}
	mu.Lock()
	want := append([]string(nil), acked...)
	mu.Unlock()
	got := map[string]bool{}
	for _, rec := range readAll(t, addr, topic, declared.Partitions) {
		got[string(rec.Value)] = true
	}
	var lost []string
	for _, v := range want {
		if !got[v] {
			lost = append(lost, v)
		}
	}
	require.Empty(t, lost, "acknowledged records lost after SIGKILL (%d acknowledged, %d read)", len(want), len(got))

	// The group resumes from its committed offsets and reads every record
	// written after the restart.
	r := groupReader(addr, topic, t)
	defer r.Close()
	readCtx, cancel := context.WithTimeout(context.Background(), kafkatest.Timeout)
	defer cancel()
	after := map[string]bool{}
	for len(after) < 40 {
		rec, err := r.ReadMessage(readCtx)
		require.NoError(t, err, "the group read %d of the 40 records written after the restart", len(after))
		if strings.HasPrefix(string(rec.Value), "after-") {
			after[string(rec.Value)] = true
		}
	}
}

func groupReader(addr, topic string, t *testing.T) *kafkago.Reader {
	return kafkago.NewReader(kafkago.ReaderConfig{
		Brokers: []string{addr}, Topic: topic, GroupID: "g-" + topic, MaxWait: 250 * time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond, SessionTimeout: 6 * time.Second, RebalanceTimeout: 2 * time.Second,
		ErrorLogger: kafkago.LoggerFunc(func(format string, args ...any) { t.Logf("group reader: "+format, args...) }),
	})
}

// readAll reads every record of topic's partitions, from the first offset
// to the end the broker states, with a plain connection, so that a record
// the broker cannot serve fails the test with the client's error instead
// of being retried for ever.
func readAll(t *testing.T, addr, topic string, partitions int) []kafkago.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kafkatest.Timeout)
	defer cancel()
	var all []kafkago.Message
	for p := range partitions {
		var conn *kafkago.Conn
		require.Eventually(t, func() bool {
			var err error
			conn, err = kafkago.DialLeader(ctx, "tcp", addr, topic, p)
			return err == nil
		}, kafkatest.Timeout, 50*time.Millisecond, "partition %d has no leader", p)
		first, last, err := conn.ReadOffsets()
		require.NoError(t, err)
		for offset := first; offset < last; {
			_, err := conn.Seek(offset, kafkago.SeekAbsolute)
			require.NoError(t, err)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			batch := conn.ReadBatch(1, 1<<20)
			for {
				rec, err := batch.ReadMessage()
				if err != nil {
					break
				}
				all = append(all, rec)
				offset = rec.Offset + 1
			}
			require.NoError(t, batch.Close(), "partition %d at offset %d of %d", p, offset, last)
		}
		conn.Close()
	}
	return all
}
