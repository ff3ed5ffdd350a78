package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Handler processes one message. Its ctx carries a "<topic> process" span
// whose parent is the producer's span taken from the record's headers. A
// nil return commits the message; an error retries it.
type Handler func(ctx context.Context, msg Message) error

// Consumer defaults, in one place.
const (
	defaultRetryBackoff      = 200 * time.Millisecond
	defaultRetryBackoffMax   = 5 * time.Second
	defaultDeadLetterSuffix  = DeadLetterSuffix
	defaultMinBytes          = 1
	defaultMaxWait           = 250 * time.Millisecond
	defaultHeartbeatInterval = 3 * time.Second
	defaultSessionTimeout    = 30 * time.Second
	defaultRebalanceTimeout  = 30 * time.Second
	defaultDrainTimeout      = 10 * time.Second

	// maxFetchBytes is kafka-go's default, which it only applies when
	// MinBytes is unset too.
	maxFetchBytes = 1 << 20

	// fetchFailureWindow is how long a fetch error keeps the consumer
	// not ready when nothing was fetched since. While the broker is away
	// kafka-go reports an error about every second; once it is back, a
	// quiet topic fetches nothing that could clear the error.
	fetchFailureWindow = 10 * time.Second
)

// ConsumerConfig configures a Consumer. Zero values take the defaults.
type ConsumerConfig struct {
	// Brokers are the seed broker addresses, host:port.
	Brokers []string
	// Security is TLS and SASL; zero is plaintext.
	Security Security
	// ClientID names this client in broker logs and quotas. Default "pcourt".
	ClientID string
	// GroupID is the consumer group; its committed offsets are where a
	// restarted consumer resumes.
	GroupID string
	// Topic is the one topic consumed.
	Topic string
	// RetryBackoff is the wait after the first failure; it doubles after
	// each further failure up to RetryBackoffMax. A failure is retried for
	// as long as it lasts (a Redis failover, a store away), holding its
	// partition; only a Permanent one is dead-lettered. Default 200ms.
	RetryBackoff time.Duration
	// RetryBackoffMax caps the wait between attempts. Default 5s.
	RetryBackoffMax time.Duration
	// DeadLetterTopic receives the messages whose handler failed
	// Permanent: they can never succeed. Default Topic+".dlq".
	DeadLetterTopic string
	// MinBytes is the least data a fetch waits for. Default 1, so a single
	// event is delivered at once.
	MinBytes int
	// MaxWait bounds how long a fetch waits for MinBytes. Default 250ms.
	MaxWait time.Duration
	// StartOffset is where a group without committed offsets starts:
	// FirstOffset (default) or LastOffset.
	StartOffset int64
	// HeartbeatInterval is how often the group membership is renewed.
	// Default 3s.
	HeartbeatInterval time.Duration
	// SessionTimeout is how long the coordinator keeps a silent member
	// before giving its partitions away. Default 30s; brokers enforce a
	// minimum (6s on Kafka and kfake).
	SessionTimeout time.Duration
	// RebalanceTimeout is how long the coordinator waits for members to
	// rejoin during a rebalance. Default 30s.
	RebalanceTimeout time.Duration
	// DrainTimeout is how long the message in hand may still take (handler,
	// dead-lettering, commit) after Run's ctx is cancelled. Default 10s.
	DrainTimeout time.Duration
	// CommitInterval batches offset commits: a handled message's offset is
	// marked at once and committed with the others every interval (and
	// when the consumer stops), instead of one synchronous round trip to
	// the coordinator per message. A committed offset still always means
	// a handled message; a crash loses at most an interval of marks, and
	// the idempotent handler dedupes what is redelivered. 0 (default)
	// commits each message synchronously.
	CommitInterval time.Duration
}

// withDefaults fills zero fields.
func (c ConsumerConfig) withDefaults() ConsumerConfig {
	if c.ClientID == "" {
		c.ClientID = defaultClientID
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = defaultRetryBackoff
	}
	if c.RetryBackoffMax == 0 {
		c.RetryBackoffMax = max(defaultRetryBackoffMax, c.RetryBackoff)
	}
	if c.DeadLetterTopic == "" {
		c.DeadLetterTopic = c.Topic + defaultDeadLetterSuffix
	}
	if c.MinBytes == 0 {
		c.MinBytes = defaultMinBytes
	}
	if c.MaxWait == 0 {
		c.MaxWait = defaultMaxWait
	}
	if c.StartOffset == 0 {
		c.StartOffset = FirstOffset
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = defaultHeartbeatInterval
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = defaultSessionTimeout
	}
	if c.RebalanceTimeout == 0 {
		c.RebalanceTimeout = defaultRebalanceTimeout
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = defaultDrainTimeout
	}
	return c
}

// Validate reports every invalid field. Zero values are valid where a
// default exists.
func (c ConsumerConfig) Validate() error {
	var errs []error
	errs = append(errs, validateBrokers(c.Brokers), c.Security.Validate())
	if c.GroupID == "" {
		errs = append(errs, errors.New("no group id"))
	}
	if c.Topic == "" {
		errs = append(errs, errors.New("no topic"))
	}
	if c.DeadLetterTopic != "" && c.DeadLetterTopic == c.Topic {
		errs = append(errs, fmt.Errorf("dead-letter topic %q is the consumed topic", c.Topic))
	}
	if c.MinBytes < 0 {
		errs = append(errs, fmt.Errorf("min bytes %d is negative", c.MinBytes))
	}
	if c.CommitInterval < 0 {
		errs = append(errs, fmt.Errorf("commit interval %s is negative", c.CommitInterval))
	}
	if c.StartOffset != 0 && c.StartOffset != FirstOffset && c.StartOffset != LastOffset {
		errs = append(errs, fmt.Errorf("start offset %d is neither FirstOffset nor LastOffset", c.StartOffset))
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{
		{"retry backoff", c.RetryBackoff},
		{"retry backoff max", c.RetryBackoffMax},
		{"max wait", c.MaxWait},
		{"heartbeat interval", c.HeartbeatInterval},
		{"session timeout", c.SessionTimeout},
		{"rebalance timeout", c.RebalanceTimeout},
		{"drain timeout", c.DrainTimeout},
	} {
		if d.value < 0 {
			errs = append(errs, fmt.Errorf("%s %v is negative", d.name, d.value))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kafka consumer config: %w", err)
	}
	return nil
}

// Consumer reads one topic as a member of a consumer group and gives each
// message to a Handler, one at a time. Delivery is at least once: an offset
// is committed only after the handler succeeded or the message reached the
// dead-letter topic, so handlers must be idempotent (dedupe on EventID).
type Consumer struct {
	cfg         ConsumerConfig
	handle      Handler
	deadLetters *Producer
	logger      *slog.Logger
	tracer      trace.Tracer
	readerCfg   kafkago.ReaderConfig
	// deadLettered counts the records written to the dead-letter topic
	// (pcourt_kafka_dead_letters_total), under deadLetterAttrs.
	deadLettered    metric.Int64Counter
	deadLetterAttrs metric.MeasurementOption

	mu         sync.Mutex
	fetchErr   error // the last fetch error, nil once a record was fetched since
	fetchErrAt time.Time
}

// NewConsumer returns a Consumer for cfg. deadLetters writes the messages
// whose handler failed Permanent; tracer makes the "<topic> process" spans
// (nil means the otel global provider, as for Producer). Dead letters are
// counted (pcourt_kafka_dead_letters_total) through the otel global
// MeterProvider, which libs/telemetry installs.
func NewConsumer(cfg ConsumerConfig, handle Handler, deadLetters *Producer, logger *slog.Logger, tracer trace.TracerProvider) (*Consumer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case handle == nil:
		return nil, errors.New("kafka consumer: nil handler")
	case deadLetters == nil:
		return nil, errors.New("kafka consumer: nil dead-letter producer")
	case logger == nil:
		return nil, errors.New("kafka consumer: nil logger")
	}
	cfg = cfg.withDefaults()
	conn, err := cfg.Security.connection()
	if err != nil {
		return nil, err
	}
	logger = logger.With("topic", cfg.Topic, "group", cfg.GroupID)
	rc := kafkago.ReaderConfig{
		Brokers: cfg.Brokers,
		GroupID: cfg.GroupID,
		Topic:   cfg.Topic,
		Dialer: &kafkago.Dialer{ClientID: cfg.ClientID, Timeout: 10 * time.Second, DualStack: true,
			TLS: conn.tls, SASLMechanism: conn.sasl},
		MinBytes:          cfg.MinBytes,
		MaxBytes:          maxFetchBytes,
		MaxWait:           cfg.MaxWait,
		StartOffset:       cfg.StartOffset,
		HeartbeatInterval: cfg.HeartbeatInterval,
		SessionTimeout:    cfg.SessionTimeout,
		RebalanceTimeout:  cfg.RebalanceTimeout,
		// Offsets are committed only after their message was handled,
		// either at once (CommitInterval 0) or in periodic batches.
		CommitInterval:        cfg.CommitInterval,
		WatchPartitionChanges: true, // partitions added by ops are picked up
		ErrorLogger: kafkago.LoggerFunc(func(format string, args ...any) {
			logger.Warn("kafka reader error", "err", fmt.Sprintf(format, args...))
		}),
	}
	// kafka-go's NewReader panics on an invalid config; return it instead.
	if err := rc.Validate(); err != nil {
		return nil, fmt.Errorf("kafka consumer config: %w", err)
	}
	counter, attrs, err := deadLetterCounter(cfg)
	if err != nil {
		return nil, err
	}
	return &Consumer{
		cfg:             cfg,
		handle:          handle,
		deadLetters:     deadLetters,
		logger:          logger,
		tracer:          tracerProvider(tracer).Tracer(tracerName),
		readerCfg:       rc,
		deadLettered:    counter,
		deadLetterAttrs: attrs,
	}, nil
}

// Run consumes until ctx is cancelled, then returns nil. While the broker
// cannot be reached or a fetch fails, Run logs, backs off and fetches again
// (kafka-go's readers keep reconnecting meanwhile) and Probe reports the
// failure; it does not return, so a broker away for seconds does not stop
// the service. On cancellation it finishes the message in hand
// (bounded by DrainTimeout) but starts no new attempt, so an unfinished
// message stays uncommitted and goes to the group's next consumer. Run
// joins the group on entry and leaves it on return, so it may be called
// again after it returned.
func (c *Consumer) Run(ctx context.Context) error {
	// The reader is made here, not in NewConsumer, because kafka-go joins
	// the group as soon as a reader exists.
	reader := kafkago.NewReader(c.readerCfg)
	defer func() {
		if err := reader.Close(); err != nil {
			c.logger.Warn("kafka reader close failed", "err", err)
		}
	}()
	c.logger.InfoContext(ctx, "kafka consumer started")
	failures := 0
	for {
		rec, err := reader.FetchMessage(ctx)
		// FetchMessage may hand out a buffered record even after ctx is
		// cancelled; starting it would break the promise that nothing new
		// starts once shutdown began.
		if ctx.Err() != nil {
			c.logger.InfoContext(ctx, "kafka consumer stopped")
			return nil
		}
		if err != nil {
			failures++
			c.fetchFailed(err)
			c.logger.WarnContext(ctx, "kafka fetch failed; fetching again", "failures", failures, "err", err)
			if !wait(ctx, c.backoff(failures)) {
				c.logger.InfoContext(ctx, "kafka consumer stopped")
				return nil
			}
			continue
		}
		if failures > 0 {
			c.logger.InfoContext(ctx, "kafka fetch recovered", "failures", failures)
			failures = 0
		}
		c.fetched()
		if !c.process(ctx, reader, rec) {
			// rec stays uncommitted. Handling the next record of its
			// partition could commit past it, so stop here.
			c.logger.InfoContext(ctx, "kafka consumer stopped")
			return nil
		}
	}
}

// Probe reports the consumer's fetch failure while it lasts: an error in
// the last fetchFailureWindow with no record fetched since. Readiness
// checks use it.
func (c *Consumer) Probe(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fetchErr == nil || time.Since(c.fetchErrAt) > fetchFailureWindow {
		return nil
	}
	return fmt.Errorf("fetching from %s: %w", c.cfg.Topic, c.fetchErr)
}

func (c *Consumer) fetchFailed(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fetchErr, c.fetchErrAt = err, time.Now()
}

func (c *Consumer) fetched() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fetchErr = nil
}

// process takes one record to a commit and reports true, or reports false
// when ctx was cancelled first and the record is left uncommitted.
func (c *Consumer) process(ctx context.Context, reader *kafkago.Reader, rec kafkago.Message) bool {
	msg := fromRecord(rec)
	// The producer's span is the parent of every attempt.
	parent := propagator.Extract(ctx, headerCarrier{&rec.Headers})
	work, cancel := drainContext(parent, c.cfg.DrainTimeout)
	defer cancel()
	log := c.logger.With("partition", rec.Partition, "offset", rec.Offset, "event_id", msg.EventID)

	var lastErr error
	attempt := 1
	for ; ; attempt++ {
		lastErr = c.attempt(work, msg, attempt, log)
		if lastErr == nil {
			commit(work, reader, rec, log)
			return true
		}
		if ctx.Err() != nil {
			break
		}
		// A message that can never succeed goes to the dead-letter topic
		// at once; any other failure is an outage of something the handler
		// needs, waited out with backoff however long it lasts: losing an
		// opening or an event to a dead-letter topic because Redis failed
		// over is worse than holding the partition (its lag shows it).
		if IsPermanent(lastErr) {
			if !c.deadLetter(ctx, work, rec, msg, lastErr, attempt, log) {
				break
			}
			commit(work, reader, rec, log)
			return true
		}
		if !wait(ctx, c.backoff(attempt)) {
			break
		}
	}
	log.InfoContext(work, "kafka message left uncommitted at shutdown", "attempts", attempt)
	return false
}

// attempt runs the handler once inside a "<topic> process" span.
func (c *Consumer) attempt(ctx context.Context, msg Message, attempt int, log *slog.Logger) error {
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemKafka,
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingDestinationName(msg.Topic),
		semconv.MessagingConsumerGroupName(c.cfg.GroupID),
		semconv.MessagingDestinationPartitionID(strconv.Itoa(msg.Partition)),
		semconv.MessagingKafkaOffset(int(msg.Offset)),
	}
	if msg.Key != "" {
		attrs = append(attrs, semconv.MessagingKafkaMessageKey(msg.Key))
	}
	if msg.EventID != "" {
		attrs = append(attrs, semconv.MessagingMessageID(msg.EventID))
	}
	ctx, span := c.tracer.Start(ctx, msg.Topic+" process",
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attrs...))
	defer span.End()

	err := c.handle(ctx, msg)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "handler failed")
		log.WarnContext(ctx, "kafka handler failed", "attempt", attempt, "permanent", IsPermanent(err), "err", err)
	}
	return err
}

// permanentError marks a failure no retry can fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err, returned by a Handler, as a failure of the message
// itself, which no retry can fix (it does not decode, breaks its schema,
// or its content is refused by the domain): the message is dead-lettered
// at once. Any other error is transient and retried until it passes.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err, or an error it wraps, was marked
// Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// deadLetter writes a message that can never succeed to the dead-letter topic, retrying
// with backoff until it is written or ctx is cancelled. It reports whether
// the message may be committed.
func (c *Consumer) deadLetter(ctx, work context.Context, rec kafkago.Message, msg Message, cause error, attempts int, log *slog.Logger) bool {
	dl := Message{
		Topic:   c.cfg.DeadLetterTopic,
		Key:     msg.Key,
		EventID: msg.EventID,
		Schema:  msg.Schema,
		Value:   msg.Value,
		Headers: make(map[string]string, len(msg.Headers)+7),
	}
	for k, v := range msg.Headers {
		dl.Headers[k] = v
	}
	dl.Headers[HeaderDLQReason] = cause.Error()
	dl.Headers[HeaderDLQAttempts] = strconv.Itoa(attempts)
	dl.Headers[HeaderDLQTopic] = rec.Topic
	dl.Headers[HeaderDLQPartition] = strconv.Itoa(rec.Partition)
	dl.Headers[HeaderDLQOffset] = strconv.FormatInt(rec.Offset, 10)
	dl.Headers[HeaderDLQGroup] = c.cfg.GroupID
	dl.Headers[HeaderDLQAt] = time.Now().UTC().Format(time.RFC3339Nano)

	for try := 1; ; try++ {
		err := c.deadLetters.write(work, []Message{dl})
		if err == nil {
			c.deadLettered.Add(work, 1, c.deadLetterAttrs)
			log.ErrorContext(work, "kafka message dead-lettered", "dead_letter_topic", dl.Topic, "attempts", attempts, "err", cause)
			return true
		}
		log.ErrorContext(work, "kafka dead-letter write failed", "dead_letter_topic", dl.Topic, "err", err)
		if ctx.Err() != nil || !wait(ctx, c.backoff(try)) {
			return false
		}
	}
}

// commit commits rec. A failed commit is logged, not fatal: the group's next
// owner of the partition redelivers the message and the handler dedupes it.
func commit(ctx context.Context, reader *kafkago.Reader, rec kafkago.Message, log *slog.Logger) {
	if err := reader.CommitMessages(ctx, rec); err != nil {
		log.ErrorContext(ctx, "kafka commit failed", "err", err)
	}
}

// backoff is the wait after the given failed attempt: RetryBackoff doubled
// per attempt, capped at RetryBackoffMax.
func (c *Consumer) backoff(attempt int) time.Duration {
	d := c.cfg.RetryBackoff
	for i := 1; i < attempt && d < c.cfg.RetryBackoffMax; i++ {
		d *= 2
	}
	return min(d, c.cfg.RetryBackoffMax)
}

// wait pauses for d and reports false if ctx was cancelled first.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// drainContext returns a context with parent's values that outlives
// parent's cancellation by grace, so the message in hand can finish during a
// graceful shutdown without holding it up forever.
func drainContext(parent context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	stop := context.AfterFunc(parent, func() {
		t := time.AfterFunc(grace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})
	return ctx, func() {
		stop()
		cancel()
	}
}
