package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/kafka"
)

const dlqUsage = `usage: pcadm dlq <command> [flags]
commands:
  list   -topic T [-group G]                        the dead letters of T (T.dlq), oldest first, and whether each was replayed
  replay -topic T [-group G] (-all | -offset P:O … | -key K …) [-dry-run]
                                                    publish the chosen dead letters to T again, each once however often it is run
-topic names the consumed topic or its dead-letter topic; -group keeps the dead letters one consumer group wrote.
The brokers are KAFKA_BROKERS (comma-separated), reached with the KAFKA_TLS* and KAFKA_SASL_* settings, as the services find them. Runbook: docs/dead-letters.md`

// replayClockSkew is how far before a dead letter's time the search for
// its replay starts: the dead letter's timestamp is the consuming
// service's clock, the replay's is pcadm's.
const replayClockSkew = time.Hour

// dlqReadTimeout bounds one command's reads: a partition that does not
// reach the end offset read at the start is an error, never a hang.
const dlqReadTimeout = 2 * time.Minute

func dlq(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(dlqUsage)
	}
	env := envconf.New(getenv)
	brokers := env.List("KAFKA_BROKERS", []string{"127.0.0.1:9092"})
	security := kafka.SecurityFromEnv(env)
	if err := env.Err(); err != nil {
		return err
	}
	cmd, rest := args[0], args[1:]
	fs := flag.NewFlagSet("dlq "+cmd, flag.ContinueOnError)
	topic := fs.String("topic", "", "the consumed topic, or its dead-letter topic <topic>.dlq (required)")
	group := fs.String("group", "", "only the dead letters this consumer group wrote")
	var (
		offsets, keys multi
		all, dryRun   *bool
	)
	if cmd == "replay" {
		fs.Var(&offsets, "offset", "the dead letter at P:O (partition:offset of the dead-letter topic, as list shows it; repeatable)")
		fs.Var(&keys, "key", "the dead letters whose record has this key, a case id (repeatable)")
		all = fs.Bool("all", false, "every dead letter (of -group, when given)")
		dryRun = fs.Bool("dry-run", false, "say what would be published, publish nothing")
	}
	switch cmd {
	case "list", "replay":
	default:
		return fmt.Errorf("unknown command %q\n%s", cmd, dlqUsage)
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if *topic == "" {
		return errors.New("-topic is required")
	}
	deadLetterTopic := *topic
	if !strings.HasSuffix(deadLetterTopic, ".dlq") {
		deadLetterTopic += ".dlq"
	}
	ctx, cancel := context.WithTimeout(ctx, dlqReadTimeout)
	defer cancel()
	// A transport of its own: kafka-go's default one is shared by the
	// process and caches the cluster's metadata, which may predate the
	// dead-letter topic.
	transport, err := security.Transport("pcadm")
	if err != nil {
		return err
	}
	defer transport.CloseIdleConnections()
	dialer, err := security.Dialer("pcadm")
	if err != nil {
		return err
	}
	k := kafkaAdmin{brokers: brokers, dialer: dialer, client: &kafkago.Client{Addr: kafkago.TCP(brokers...), Timeout: 30 * time.Second, Transport: transport}}

	letters, err := k.deadLetters(ctx, deadLetterTopic, *group)
	if err != nil {
		return err
	}
	replayed, err := k.replayed(ctx, letters)
	if err != nil {
		return err
	}
	if cmd == "list" {
		return listDeadLetters(stdout, letters, replayed)
	}

	chosen, err := choose(letters, *all, offsets, keys)
	if err != nil {
		return err
	}
	published := 0
	for _, d := range chosen {
		dl := d.DeadLetter
		if at, ok := replayed[dl.Ref()]; ok {
			fmt.Fprintf(stdout, "%s already replayed to %s, skipped\n", dl.Ref(), at)
			continue
		}
		to := fmt.Sprintf("%s/%d", dl.Original.Topic, dl.Original.Partition)
		if *dryRun {
			fmt.Fprintf(stdout, "%s would be replayed to %s (key %q, event %s)\n", dl.Ref(), to, dl.Original.Key, dash(dl.Original.EventID))
			continue
		}
		offset, err := k.publish(ctx, dl.Replay())
		if err != nil {
			return fmt.Errorf("replaying %s (%d replayed before it): %w", dl.Ref(), published, err)
		}
		published++
		fmt.Fprintf(stdout, "%s replayed to %s/%d\n", dl.Ref(), to, offset)
	}
	if *dryRun {
		fmt.Fprintf(stdout, "dry run: nothing published\n")
		return nil
	}
	fmt.Fprintf(stdout, "%d replayed\n", published)
	return nil
}

// kafkaAdmin reads and writes topics partition by partition, outside any
// consumer group: pcadm commits nothing, so it disturbs no consumer.
type kafkaAdmin struct {
	brokers []string
	dialer  *kafkago.Dialer
	client  *kafkago.Client
}

// deadLetter is a dead letter with its record's timestamp.
type deadLetter struct {
	kafka.DeadLetter
	written time.Time
}

// deadLetters reads every record of topic, oldest first per partition,
// keeping those group wrote (all of them when group is "").
func (k kafkaAdmin) deadLetters(ctx context.Context, topic, group string) ([]deadLetter, error) {
	partitions, err := k.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	var out []deadLetter
	for _, p := range partitions {
		err := k.read(ctx, topic, p, kafkago.FirstOffset, func(rec kafkago.Message) error {
			d, err := kafka.ReadDeadLetter(rec)
			if err != nil {
				return err
			}
			if group == "" || d.Group == group {
				out = append(out, deadLetter{d, rec.Time})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].written.Before(out[j].written) })
	return out, nil
}

// replayed finds which of letters were already replayed: where each one's
// replay sits ("<topic>/<partition>/<offset>"), by the dead letter's Ref.
// A replay is the record in the dead letter's original partition that
// names it in HeaderDLQReplayOf; it was written after the dead letter, so
// each partition is read from the earliest dead letter's time (less
// replayClockSkew) to its end.
func (k kafkaAdmin) replayed(ctx context.Context, letters []deadLetter) (map[string]string, error) {
	type partition struct {
		topic string
		id    int
	}
	since := map[partition]time.Time{}
	for _, d := range letters {
		p := partition{d.Original.Topic, d.Original.Partition}
		if t, ok := since[p]; !ok || d.written.Before(t) {
			since[p] = d.written
		}
	}
	out := map[string]string{}
	for p, t := range since {
		from := kafkago.FirstOffset // a dead letter without a timestamp: the whole partition
		if t.After(time.Unix(0, 0).Add(replayClockSkew)) {
			var err error
			if from, err = k.offset(ctx, p.topic, kafkago.TimeOffsetOf(p.id, t.Add(-replayClockSkew))); err != nil {
				return nil, err
			}
		}
		if from == -1 {
			continue // nothing written since: nothing replayed
		}
		err := k.read(ctx, p.topic, p.id, from, func(rec kafkago.Message) error {
			if ref := kafka.ReplayedFrom(rec); ref != "" {
				out[ref] = fmt.Sprintf("%s/%d/%d", rec.Topic, rec.Partition, rec.Offset)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// partitions lists topic's partitions; a topic that does not exist has
// none (nothing was ever dead-lettered to it).
func (k kafkaAdmin) partitions(ctx context.Context, topic string) ([]int, error) {
	meta, err := k.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("reading the partitions of %s: %w", topic, err)
	}
	var out []int
	for _, t := range meta.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			if errors.Is(t.Error, kafkago.UnknownTopicOrPartition) {
				return nil, nil
			}
			return nil, fmt.Errorf("reading the partitions of %s: %w", topic, t.Error)
		}
		for _, p := range t.Partitions {
			out = append(out, p.ID)
		}
	}
	sort.Ints(out)
	return out, nil
}

// read hands each record of one partition from offset from (or
// kafkago.FirstOffset) up to the partition's end as it is when read
// starts, in order.
func (k kafkaAdmin) read(ctx context.Context, topic string, partition int, from int64, each func(kafkago.Message) error) error {
	first, err := k.offset(ctx, topic, kafkago.FirstOffsetOf(partition))
	if err != nil {
		return err
	}
	end, err := k.offset(ctx, topic, kafkago.LastOffsetOf(partition))
	if err != nil {
		return err
	}
	if from == kafkago.FirstOffset || from < first {
		from = first
	}
	if from >= end {
		return nil
	}
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: k.brokers, Dialer: k.dialer, Topic: topic, Partition: partition, MaxWait: 500 * time.Millisecond})
	defer r.Close()
	if err := r.SetOffset(from); err != nil {
		return err
	}
	for {
		rec, err := r.ReadMessage(ctx)
		if err != nil {
			return fmt.Errorf("reading %s/%d up to offset %d: %w", topic, partition, end, err)
		}
		if err := each(rec); err != nil {
			return err
		}
		if rec.Offset >= end-1 {
			return nil
		}
	}
}

// offset answers one offset request: the first offset, the end offset
// (the next to be written), or -1 when a time request finds no record at
// or after its time.
func (k kafkaAdmin) offset(ctx context.Context, topic string, req kafkago.OffsetRequest) (int64, error) {
	resp, err := k.client.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{topic: {req}}})
	if err != nil {
		return 0, fmt.Errorf("reading the offsets of %s/%d: %w", topic, req.Partition, err)
	}
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return 0, fmt.Errorf("reading the offsets of %s/%d: %w", topic, req.Partition, po.Error)
		}
		switch req.Timestamp {
		case kafkago.FirstOffset:
			return po.FirstOffset, nil
		case kafkago.LastOffset:
			return po.LastOffset, nil
		}
		for offset := range po.Offsets {
			return offset, nil
		}
	}
	return -1, nil
}

// publish writes rec to its topic and partition and returns its offset
// once every in-sync replica has it, as the services' producers do.
func (k kafkaAdmin) publish(ctx context.Context, rec kafkago.Message) (int64, error) {
	record := kafkago.Record{Time: time.Now(), Headers: rec.Headers, Value: kafkago.NewBytes(rec.Value)}
	if rec.Key != nil {
		record.Key = kafkago.NewBytes(rec.Key)
	}
	resp, err := k.client.Produce(ctx, &kafkago.ProduceRequest{
		Topic:        rec.Topic,
		Partition:    rec.Partition,
		RequiredAcks: kafkago.RequireAll,
		Records:      kafkago.NewRecordReader(record),
	})
	if err == nil {
		err = resp.Error
	}
	if err != nil {
		return 0, err
	}
	return resp.BaseOffset, nil
}

// choose returns the dead letters the flags select, refusing a selection
// that names nothing or names what is not there.
func choose(letters []deadLetter, all bool, offsets, keys []string) ([]deadLetter, error) {
	if all == (len(offsets)+len(keys) > 0) {
		return nil, errors.New("choose the dead letters: -all, or -offset P:O and -key K (repeatable)")
	}
	if all {
		return letters, nil
	}
	at := map[string]bool{}
	for _, o := range offsets {
		p, off, ok := strings.Cut(o, ":")
		pi, err1 := strconv.Atoi(p)
		oi, err2 := strconv.ParseInt(off, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("-offset %q is not partition:offset", o)
		}
		at[fmt.Sprintf("%d:%d", pi, oi)] = false
	}
	key := map[string]bool{}
	for _, k := range keys {
		key[k] = false
	}
	var out []deadLetter
	for _, d := range letters {
		pos := fmt.Sprintf("%d:%d", d.Partition, d.Offset)
		_, byOffset := at[pos]
		_, byKey := key[d.Original.Key]
		if byOffset {
			at[pos] = true
		}
		if byKey {
			key[d.Original.Key] = true
		}
		if byOffset || byKey {
			out = append(out, d)
		}
	}
	var missing []string
	for pos, found := range at {
		if !found {
			missing = append(missing, "offset "+pos)
		}
	}
	for k, found := range key {
		if !found {
			missing = append(missing, "key "+strconv.Quote(k))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("no such dead letter: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

func listDeadLetters(stdout io.Writer, letters []deadLetter, replayed map[string]string) error {
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "AT\tPARTITION:OFFSET\tKEY\tEVENT\tSCHEMA\tFROM\tGROUP\tATTEMPTS\tREPLAYED\tREASON")
	for _, d := range letters {
		at := d.written
		if !d.At.IsZero() {
			at = d.At
		}
		fmt.Fprintf(w, "%s\t%d:%d\t%s\t%s\t%s\t%s/%d/%d\t%s\t%d\t%s\t%s\n",
			at.UTC().Format(time.RFC3339), d.Partition, d.Offset, dash(d.Original.Key), dash(d.Original.EventID), dash(d.Original.Schema),
			d.Original.Topic, d.Original.Partition, d.Original.Offset, dash(d.Group), d.Attempts, dash(replayed[d.Ref()]), d.Reason)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d dead letters\n", len(letters))
	return nil
}
