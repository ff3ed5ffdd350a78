// Package idempotency implements the platform's Idempotency-Key contract as
// Gin middleware over Redis:
//
//   - the key (8 to 200 visible ASCII characters) is scoped by tenant,
//     environment and credential, so two callers never share a journal;
//   - the request fingerprint is the operation, the credential, tenant,
//     environment and the canonical JSON body;
//   - the first request claims the key with a lease and runs; a concurrent one
//     gets 409 idempotency_in_flight; a later one with the same fingerprint
//     gets the stored status, headers and body; a different fingerprint gets
//     422 idempotency_key_reused;
//   - a final answer (any status below 500 except 408 and 429) is kept for the
//     retention period; a transient one (5xx, 408, 429, a panic) releases the
//     key so the caller may retry it;
//   - a replica that dies mid-request leaves a lease that expires, after which
//     a retry runs again;
//   - a replay is a new response with its own request id, in X-Request-Id
//     and in the body's requestId; X-Original-Request-Id names the request
//     whose answer it repeats.
package idempotency

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/jcs"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
)

// Header is the request header that carries the key.
const Header = "Idempotency-Key"

// ReplayedHeader is set to "true" on a response served from the journal.
const ReplayedHeader = "Idempotent-Replayed"

// OriginalRequestIDHeader carries, on a replay, the id of the request whose
// answer is replayed. The replay itself is one response with one id: its
// X-Request-Id and the body's requestId are both the new request's.
const OriginalRequestIDHeader = "X-Original-Request-Id"

// Config configures a Journal.
type Config struct {
	// Prefix namespaces the service's keys, e.g. "pc:filings".
	Prefix string
	// Retention is how long a final answer is replayed.
	Retention time.Duration
	// Lease is how long a running request holds its key before another
	// attempt may presume it crashed and run again. It must exceed the
	// longest request the operation can take.
	Lease time.Duration
}

// DefaultConfig keeps answers for 24 hours and presumes a request dead after 30 s.
func DefaultConfig(prefix string) Config {
	return Config{Prefix: prefix, Retention: 24 * time.Hour, Lease: 30 * time.Second}
}

// Validate reports the first unusable setting.
func (c Config) Validate() error {
	switch {
	case c.Prefix == "":
		return errors.New("idempotency: prefix required")
	case c.Retention < time.Minute:
		return errors.New("idempotency: retention must be at least a minute")
	case c.Lease <= 0 || c.Lease >= c.Retention:
		return errors.New("idempotency: lease must be positive and shorter than retention")
	}
	return nil
}

// Journal stores the outcome of each keyed request.
type Journal struct {
	rdb    redis.UniversalClient
	cfg    Config
	logger *slog.Logger
}

// NewJournal returns a Journal over rdb, or the configuration's error.
func NewJournal(rdb redis.UniversalClient, cfg Config, logger *slog.Logger) (*Journal, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Journal{rdb: rdb, cfg: cfg, logger: logger}, nil
}

// Option adjusts one operation's middleware.
type Option func(*operationOptions)

type operationOptions struct {
	recheck func(*gin.Context) error
	render  func(c *gin.Context, status int, header http.Header, body []byte) ([]byte, error)
}

// RecheckBeforeReplay runs check before a stored answer is replayed: an
// operation whose authority or deadline can lapse refuses the replay with
// the check's error (rendered as a problem) instead of returning the old answer.
func RecheckBeforeReplay(check func(*gin.Context) error) Option {
	return func(o *operationOptions) { o.recheck = check }
}

// RenderOnReplay makes a replay send render's answer instead of the stored
// body: for an operation served by several routes whose views of one stored
// result differ, the journal keeps a view-neutral body (JournalBody) and
// render turns it into the view of the route the replay arrives on. render
// gets the stored status, headers (it may change them) and body; its error
// is rendered as a problem instead of the replay.
func RenderOnReplay(render func(c *gin.Context, status int, header http.Header, body []byte) ([]byte, error)) Option {
	return func(o *operationOptions) { o.render = render }
}

const journalBodyKey = "pcourt.idempotency.journal-body"

// JournalBody makes the journal store body instead of the response the
// handler sends, for answers that carry secrets shown once: the replay then
// returns body, and the secrets are never stored.
func JournalBody(c *gin.Context, body []byte) {
	c.Set(journalBodyKey, body)
}

// Middleware guards one operation. Routes that are one logical operation
// (an alias and its canonical route) pass the same name and so share one
// journal. It must run after auth.Middleware.
func (j *Journal) Middleware(operation string, opts ...Option) gin.HandlerFunc {
	var o operationOptions
	for _, opt := range opts {
		opt(&o)
	}
	return func(c *gin.Context) {
		key := c.GetHeader(Header)
		if key == "" {
			problem.Write(c, problem.New(problem.IdempotencyKeyMissing, "Send a unique Idempotency-Key header (8 to 200 characters) with this request."))
			return
		}
		if !validKey(key) {
			problem.Write(c, problem.New(problem.IdempotencyKeyInvalid, "Idempotency-Key must be 8 to 200 visible ASCII characters."))
			return
		}
		cred, ok := auth.CredentialFrom(c.Request.Context())
		if !ok {
			problem.Write(c, problem.New(problem.Unauthenticated, "Send a bearer credential in the Authorization header."))
			return
		}
		body, err := httpserver.ReadBody(c)
		if err != nil {
			problem.Render(c, err)
			return
		}
		c.Request.Body = io.NopCloser(bytes.NewReader(body))

		ctx := c.Request.Context()
		redisKey := j.key(cred, key)
		token := newToken()
		res, err := beginScript.Run(ctx, j.rdb, []string{redisKey},
			fingerprint(c.Request.Method, operation, cred, resourceOf(c), body), token,
			j.cfg.Lease.Milliseconds(), j.cfg.Retention.Milliseconds()).StringSlice()
		if err != nil {
			problem.Write(c, problem.New(problem.Unavailable, "The request journal is unavailable; retry with the same Idempotency-Key.").
				WithHeader("Retry-After", "1").Wrap(fmt.Errorf("claiming idempotency key: %w", err)))
			return
		}
		switch res[0] {
		case "mismatch":
			problem.Write(c, problem.New(problem.IdempotencyKeyReused, "This Idempotency-Key was used for a different request. Use a new key for a new request."))
			return
		case "in_flight":
			problem.Write(c, problem.New(problem.IdempotencyInFlight, "A request with this Idempotency-Key is still in progress; retry it shortly.").
				WithHeader("Retry-After", "1"))
			return
		case "done":
			if o.recheck != nil {
				if err := o.recheck(c); err != nil {
					problem.Render(c, err)
					return
				}
			}
			j.replay(c, res[1], res[2], res[3], o.render)
			return
		}

		rec := &recorder{ResponseWriter: c.Writer}
		c.Writer = rec
		finished := false
		defer func() {
			if !finished { // the handler panicked: the outcome is unknown, let a retry run
				j.release(ctx, redisKey, token)
			}
		}()
		c.Next()
		if len(c.Errors) > 0 && !c.Writer.Written() {
			problem.Render(c, c.Errors.Last().Err)
		}
		finished = true
		status := rec.Status()
		if !final(status) {
			j.release(ctx, redisKey, token)
			return
		}
		headers, _ := json.Marshal(storedHeaders(rec.Header()))
		stored := rec.body.Bytes()
		if override, ok := c.Get(journalBodyKey); ok {
			stored = override.([]byte)
		}
		err = completeScript.Run(context.WithoutCancel(ctx), j.rdb, []string{redisKey},
			token, status, string(headers), string(stored), j.cfg.Retention.Milliseconds()).Err()
		if err != nil {
			// The caller has its answer; a retry finds the lease expired and runs again.
			j.logger.ErrorContext(ctx, "storing idempotent response failed", "operation", operation, "err", err)
		}
	}
}

func (j *Journal) replay(c *gin.Context, status, headers, body string, render func(*gin.Context, int, http.Header, []byte) ([]byte, error)) {
	code, err := strconv.Atoi(status)
	if err != nil {
		problem.Write(c, problem.New(problem.Internal, "The stored response could not be read.").Wrap(err))
		return
	}
	var h map[string][]string
	if err := json.Unmarshal([]byte(headers), &h); err != nil {
		problem.Write(c, problem.New(problem.Internal, "The stored response could not be read.").Wrap(err))
		return
	}
	if render != nil {
		rendered, err := render(c, code, http.Header(h), []byte(body))
		if err != nil {
			problem.Render(c, err)
			return
		}
		body = string(rendered)
	}
	for k, vs := range h {
		for _, v := range vs {
			c.Writer.Header().Add(k, v)
		}
	}
	c.Header(ReplayedHeader, "true")
	c.Status(code)
	_, _ = c.Writer.WriteString(withRequestID(body, requestid.Get(c)))
	c.Abort()
}

func (j *Journal) release(ctx context.Context, redisKey, token string) {
	if err := releaseScript.Run(context.WithoutCancel(ctx), j.rdb, []string{redisKey}, token).Err(); err != nil {
		j.logger.ErrorContext(ctx, "releasing idempotency key failed; it frees itself when the lease ends", "err", err)
	}
}

// key scopes the caller's key by tenant, environment and actor; hashing
// keeps arbitrary key bytes out of Redis key names.
func (j *Journal) key(cred auth.Credential, key string) string {
	sum := sha256.Sum256([]byte(cred.Tenant + "\x00" + string(cred.Environment) + "\x00" + actor(cred) + "\x00" + key))
	return j.cfg.Prefix + ":idem:" + hex.EncodeToString(sum[:])
}

// actor is whose keys a credential's are: a partner credential's own (its
// public id), and an account token's account's. An account's tokens live
// minutes and its client takes a new one when one lapses (the MCP server
// exchanges one for each token its caller sends), so the retry of an act
// under the account's next token is the same act and meets its stored
// answer, where scoping by the token would run it again. The account's
// clients share its keys: they all act for it, and a key names one act.
func actor(cred auth.Credential) string {
	if cred.ForAccount() {
		return "account:" + cred.AccountID
	}
	return cred.PublicID
}

// fingerprint identifies the logical request. JSON bodies are compared by
// value in their RFC 8785 canonical form, the one every fingerprint and
// digest of the platform uses: a retry that re-serialises the same object,
// with other spacing, member order or number spelling (1250, 1250.0,
// 1.25e3), still matches. A body that is not I-JSON is taken as its bytes.
// resourceOf is the resource a request acts on: the values of its path
// parameters, in order. Aliases of one operation name their parameters
// differently (/api/cases/:id, /api/v2/cases/:caseId) but carry the same
// values, so a retry may cross between them; the same key and body sent to
// another resource (another fee's checkout, say) is another request.
func resourceOf(c *gin.Context) string {
	values := make([]string, len(c.Params))
	for i, p := range c.Params {
		values[i] = p.Value
	}
	return strings.Join(values, "\x00")
}

func fingerprint(method, operation string, cred auth.Credential, resource string, body []byte) string {
	h := sha256.New()
	for _, part := range []string{method, operation, cred.Tenant, string(cred.Environment), actor(cred), resource} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	if canonical, err := jcs.Canonicalize(json.RawMessage(body)); err == nil {
		body = canonical
	}
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func final(status int) bool {
	return status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

// storedHeaders keeps what the handler said about the result, not what
// belongs to this one exchange. The request id is kept under
// OriginalRequestIDHeader, which is what it is on a replay.
func storedHeaders(h http.Header) http.Header {
	out := h.Clone()
	if id := out.Get(requestid.Header); id != "" {
		out.Set(OriginalRequestIDHeader, id)
	}
	for _, k := range []string{requestid.Header, "Date", "Content-Length", "Traceparent", "Tracestate"} {
		out.Del(k)
	}
	return out
}

// withRequestID returns body with the string value of its top-level
// "requestId" member replaced by id, every other byte as stored. A body
// without one (not JSON, not an object, no such member) is returned as is.
func withRequestID(body, id string) string {
	dec := json.NewDecoder(strings.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return body
	}
	for dec.More() {
		name, err := dec.Token()
		if err != nil {
			return body
		}
		valueFrom := dec.InputOffset()
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return body
		}
		if name != "requestId" || len(value) == 0 || value[0] != '"' {
			continue
		}
		end := dec.InputOffset()
		start := valueFrom + int64(strings.IndexByte(body[valueFrom:end], '"'))
		quoted, _ := json.Marshal(id)
		return body[:start] + string(quoted) + body[end:]
	}
	return body
}

func validKey(k string) bool {
	if len(k) < 8 || len(k) > 200 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recorder passes the response through and keeps a copy of the body.
type recorder struct {
	gin.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) WriteString(s string) (int, error) {
	r.body.WriteString(s)
	return r.ResponseWriter.WriteString(s)
}
