package resources

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
)

// listenMethod is SEP-2575's subscriptions/listen, which the SDK's client
// sends for ClientSession.Subscribe (one stream per URI) and cancels for
// Unsubscribe.
const listenMethod = "subscriptions/listen"

// maxPeek bounds what Streams reads of a body to tell a listen: the
// transport's own bound on a message.
const maxPeek = 1 << 20

// stream is one listen stream: a POST held open on this replica, its own
// MCP server (so a notification reaches exactly this stream, and a slow
// one holds up nobody else), and the subscriptions it holds.
type stream struct {
	hub     *Hub
	account string // tenant/environment/account: the per-account bound's key
	token   string // the caller's token: re-checked before every delivery
	server  *mcp.Server
	ctx     context.Context
	cancel  context.CancelFunc
	rc      *http.ResponseController

	endOnce sync.Once
	reason  string

	mu      sync.Mutex
	uris    map[string]string // subscribed URI -> its case id
	pending map[string]bool   // URIs updated since their last notification
	wake    chan struct{}     // one pending wake-up at most
}

type streamKey struct{}

// StreamServer is the MCP server of the listen stream r carries, or nil
// for any other request (which the shared, stateless server answers).
func StreamServer(r *http.Request) *mcp.Server {
	if s, ok := r.Context().Value(streamKey{}).(*stream); ok {
		return s.server
	}
	return nil
}

// Streams is the HTTP middleware in front of the transport: a
// subscriptions/listen request becomes a stream of this replica, within
// its bounds, served by the stream's own MCP server until the client
// cancels it, its lifetime or its token ends, it is dropped as slow, or
// the replica stops. Every other request passes unchanged. It runs after
// the token check, so the caller is an authenticated account.
func (h *Hub) Streams() gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.Method != http.MethodPost || !isListen(c.Request) {
			c.Next()
			return
		}
		cred, _ := auth.CredentialFrom(c.Request.Context())
		lifetime := h.cfg.StreamLifetime
		if !cred.ExpiresAt.IsZero() {
			lifetime = min(lifetime, time.Until(cred.ExpiresAt))
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), lifetime)
		defer cancel()
		token, _ := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
		s := &stream{
			hub: h, account: cred.Tenant + "/" + string(cred.Environment) + "/" + cred.AccountID, token: token,
			ctx: ctx, cancel: cancel, rc: http.NewResponseController(c.Writer),
			uris: map[string]string{}, pending: map[string]bool{}, wake: make(chan struct{}, 1),
		}
		s.server = h.streamServer(s)
		if !h.open(s) {
			h.metrics.refused(ctx, problem.Unavailable.Name)
			problem.Write(c, problem.New(problem.Unavailable, "This replica holds as many subscription streams as it may; listen again shortly.").WithHeader("Retry-After", "1"))
			return
		}
		defer h.close(s)
		// The server's write timeout is for answers, not for a stream that
		// lasts its lifetime.
		_ = s.rc.SetWriteDeadline(time.Now().Add(lifetime + h.cfg.WriteTimeout))
		go s.deliver()
		c.Request = c.Request.WithContext(context.WithValue(ctx, streamKey{}, s))
		c.Next()
		reason := endClosed
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = endLifetime
		}
		s.end(reason)
		h.metrics.ended.Add(context.Background(), 1, attrReason(s.reason))
	}
}

// isListen reports whether the request's JSON-RPC message (or one of a
// batch) is a subscriptions/listen; the body is left for the transport
// to read whole.
func isListen(r *http.Request) bool {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(raw), r.Body), r.Body}
	if err != nil || len(raw) > maxPeek {
		return false
	}
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(raw, &one) == nil {
		return one.Method == listenMethod
	}
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(raw, &batch) == nil {
		for _, m := range batch {
			if m.Method == listenMethod {
				return true
			}
		}
	}
	return false
}

// streamServer is the stream's own MCP server: it serves the listen only,
// checking each URI it names with the API before holding it.
func (h *Hub) streamServer(s *stream) *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "pcourt", Title: "pcourt"}, &mcp.ServerOptions{
		Logger: h.logger,
		// Resource subscriptions only: no list changes (the lists do not
		// change), no tools or prompts on a stream.
		Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{Subscribe: true}},
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			return h.admit(ctx, s, req.Params.URI)
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			h.unsubscribe(s, req.Params.URI)
			return nil
		},
	})
}

// admit holds a subscription to uri on s once the API lets the caller
// read the case (GET /api/v2/cases/{caseId} with the exchanged token: a
// case of another account, tenant or environment is the API's 404, as if
// it did not exist), within the account's bound. A refusal is the
// subscription's JSON-RPC error, with the API's problem as its data.
func (h *Hub) admit(ctx context.Context, s *stream, uri string) error {
	t, ok := parseURI(uri)
	if !ok {
		h.metrics.refused(ctx, "resource_not_found")
		return mcp.ResourceNotFoundError(uri)
	}
	full := problemError(problem.Newf(problem.RateLimited, "This account holds %d subscriptions on this server already; unsubscribe from one first.", h.cfg.MaxPerAccount))
	if h.accountFull(s.account) {
		h.metrics.refused(ctx, problem.RateLimited.Name)
		return full
	}
	if _, err := h.reader.read(ctx, s.token, target{caseID: t.caseID}); err != nil {
		h.metrics.refused(ctx, problemCode(err))
		return err
	}
	switch err := h.subscribe(s, t); {
	case errors.Is(err, errAccountFull):
		h.metrics.refused(ctx, problem.RateLimited.Name)
		return full
	case err != nil:
		return problemError(problem.New(problem.Unavailable, "The listen stream has ended; listen again."))
	}
	return nil
}

func (h *Hub) accountFull(account string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.perAccount[account] >= h.cfg.MaxPerAccount
}

// problemCode is the problem code a refusal carries, for its metric.
func problemCode(err error) string {
	var rpc *jsonrpc.Error
	var p struct {
		Code string `json:"code"`
	}
	if errors.As(err, &rpc) && json.Unmarshal(rpc.Data, &p) == nil && p.Code != "" {
		return p.Code
	}
	return "unknown"
}

// deliver writes the stream's notifications, one pending URI at a time,
// until the stream ends. Before each round it checks the caller's token
// again (the credential store's two-second cache): a revoked or expired
// token's stream ends. A write that takes longer than WriteTimeout drops
// the stream, so a client that stopped reading holds only itself up.
func (s *stream) deliver() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
		}
		_, err := s.hub.credentials.Authenticate(s.ctx, s.token)
		switch {
		case errors.Is(err, auth.ErrInvalidCredential):
			s.end(endRevoked)
			return
		case err != nil:
			// The store cannot say: deliver nothing on an unchecked token;
			// the marks stay for the next event's round.
			s.hub.logger.WarnContext(s.ctx, "subscriber token not checked; notifications held", "err", err)
			continue
		}
		for _, uri := range s.takePending() {
			if s.ctx.Err() != nil {
				return
			}
			slow := time.AfterFunc(s.hub.cfg.WriteTimeout, s.dropSlow)
			_ = s.server.ResourceUpdated(s.ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
			if slow.Stop() {
				s.hub.metrics.notifications.Add(context.Background(), 1)
			}
		}
	}
}

// dropSlow ends a stream whose client does not read: the write in hand
// fails at once (its deadline is now), and the listen returns.
func (s *stream) dropSlow() {
	s.end(endSlow)
	_ = s.rc.SetWriteDeadline(time.Now())
}

// end ends the stream for reason; the first reason given is the one kept.
func (s *stream) end(reason string) {
	s.endOnce.Do(func() {
		s.reason = reason
		s.cancel()
	})
}

// mark records that caseID changed for every URI of it s holds, and wakes
// the writer without waiting.
func (s *stream) mark(caseID string) {
	s.mu.Lock()
	for uri, c := range s.uris {
		if c == caseID {
			s.pending[uri] = true
		}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is pending already; it will see this mark
	}
}

func (s *stream) takePending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	uris := make([]string, 0, len(s.pending))
	for uri := range s.pending {
		uris = append(uris, uri)
	}
	clear(s.pending)
	return uris
}

func (s *stream) holds(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.uris[uri]
	return ok
}

func (s *stream) add(t target) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uris[t.uri()] = t.caseID
}

// remove forgets uri and reports the case it was of.
func (s *stream) remove(uri string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	caseID, ok := s.uris[uri]
	delete(s.uris, uri)
	delete(s.pending, uri)
	return caseID, ok
}

func (s *stream) subscribedTo(caseID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.uris {
		if c == caseID {
			return true
		}
	}
	return false
}

func (s *stream) subscribedURIs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	uris := make([]string, 0, len(s.uris))
	for uri := range s.uris {
		uris = append(uris, uri)
	}
	return uris
}
