// Package httpserver is the HTTP front of every service: a Gin engine with the
// platform's middleware (request id, panic recovery as a problem, client
// address, RED metrics, OpenTelemetry spans, access log, problem rendering, header, concurrency,
// per-address rate and body-size limits), health endpoints, an admin
// listener for metrics and profiling, and a lifecycle that drains in-flight
// requests on shutdown.
package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/telemetry"
)

// Config is the HTTP server's configuration.
type Config struct {
	Addr string
	// AdminAddr is the admin listener (/metrics, /debug/pprof, /livez,
	// /readyz), never the public port. Empty derives it from Addr: the same
	// host, port + 1000 (port 0 stays 0). "off" runs no admin listener.
	AdminAddr    string
	MaxBodyBytes int64
	// MaxHeaderBytes bounds the request line and headers. Up to twice this
	// the server reads the request and answers a 431 problem; beyond that
	// net/http refuses it before any handler runs, with a plain-text 431, so
	// no connection can make the server hold more than about twice this.
	MaxHeaderBytes int
	// MaxInFlight caps the requests this instance serves at once; the next
	// gets a 503 overloaded problem with Retry-After instead of queueing
	// without bound. Probes are not counted.
	MaxInFlight int
	// MaxConnections caps the connections the public listener holds open,
	// idle, reading headers or serving; 0 is no cap. A connection still
	// sending its headers is outside MaxInFlight and can hold up to twice
	// MaxHeaderBytes: this is what bounds them. At the cap the server stops
	// accepting until one closes (ReadHeaderTimeout closes the slow, and
	// the server closes its idle keep-alive connections at once to make
	// room); further connections wait in the kernel's accept queue. When a listener that held half its cap or more has
	// drained to a quarter of it, the memory the connections held is
	// given back at once. The
	// edge sets it; services behind it need none.
	MaxConnections int
	// TrustedProxies lists the addresses (IP or CIDR) whose X-Forwarded-For
	// is believed: the edge in front of a service, the ingress in front of
	// the edge. A request from any other peer is counted under the peer.
	TrustedProxies []string
	// TrustedHops is the number of proxies in front of this server that
	// each append to X-Forwarded-For (the ingress in front of the edge).
	// When set, the client address of a request from a trusted proxy is the
	// entry that many from the right. It needs TrustedProxies: hops alone
	// would believe whoever reaches the server directly.
	TrustedHops int
	// AddressRate limits requests per client address, shared by every
	// replica through Redis (when the server has a limiter).
	AddressRate       ratelimit.Rule
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	ShutdownTimeout   time.Duration
}

// DefaultConfig returns the defaults; services override Addr and, where a
// resource needs it, the body limit.
func DefaultConfig() Config {
	return Config{
		Addr:              ":8080",
		MaxBodyBytes:      1 << 20,
		MaxHeaderBytes:    32 << 10,
		MaxInFlight:       1024,
		AddressRate:       ratelimit.Rule{Rate: 200, Period: time.Second, Burst: 400},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ShutdownTimeout:   20 * time.Second,
	}
}

// Validate reports the first unusable setting.
func (c Config) Validate() error {
	switch {
	case c.Addr == "":
		return errors.New("http: address required")
	case c.MaxBodyBytes <= 0:
		return errors.New("http: max body bytes must be positive")
	case c.MaxHeaderBytes < 4<<10:
		return errors.New("http: max header bytes must be at least 4096")
	case c.MaxInFlight <= 0:
		return errors.New("http: max in-flight requests must be positive")
	case c.MaxConnections < 0:
		return errors.New("http: max connections must not be negative (0 is no cap)")
	case c.TrustedHops < 0:
		return errors.New("http: trusted hops must not be negative")
	case c.ReadHeaderTimeout <= 0 || c.ShutdownTimeout <= 0:
		return errors.New("http: timeouts must be positive")
	}
	trusted, err := parsePrefixes(c.TrustedProxies)
	if err != nil {
		return fmt.Errorf("http: trusted proxies: %w", err)
	}
	if c.TrustedHops > 0 && len(trusted) == 0 {
		// Hops are counted only on requests from a trusted proxy; without
		// one, X-Forwarded-For would never be believed and every client
		// behind the ingress would share the ingress's address.
		return errors.New("http: trusted hops (HTTP_TRUSTED_HOPS) need trusted proxies (HTTP_TRUSTED_PROXIES), the proxies the hops are counted behind")
	}
	if err := c.AddressRate.Validate(); err != nil {
		return fmt.Errorf("http: address rate: %w", err)
	}
	if _, err := c.adminAddr(); err != nil {
		return err
	}
	return nil
}

// adminAddr resolves AdminAddr; "" means no admin listener.
func (c Config) adminAddr() (string, error) {
	switch c.AdminAddr {
	case "off":
		return "", nil
	case "":
		host, port, err := net.SplitHostPort(c.Addr)
		if err != nil {
			return "", fmt.Errorf("http: address %q: %w", c.Addr, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return "", fmt.Errorf("http: address %q: port is not a number", c.Addr)
		}
		if p != 0 {
			p += 1000
		}
		return net.JoinHostPort(host, strconv.Itoa(p)), nil
	}
	return c.AdminAddr, nil
}

// Check is one dependency that /readyz probes, such as Redis or Kafka.
type Check struct {
	Name  string
	Probe func(context.Context) error
	// Advisory: the dependency serves only background work, which waits
	// out its outage (Kafka: writes keep landing in the outbox and its
	// relay publishes them later; a consumer resumes where it stopped).
	// Its failure is reported (status degraded) but keeps the pod ready,
	// so that one dependency never takes the whole API out of its
	// endpoints.
	Advisory bool
}

// Deps are what the server needs from the service.
type Deps struct {
	Service   string
	Logger    *slog.Logger
	Telemetry *telemetry.Providers
	Mapper    problem.Mapper
	Checks    []Check
	// Limiter backs the per-address limit; without one there is none.
	Limiter *ratelimit.Limiter
}

// Server is a service's HTTP server.
type Server struct {
	cfg      Config
	logger   *slog.Logger
	engine   *gin.Engine
	admin    *http.ServeMux
	checks   []Check
	platform *Platform
	public   PublicServer
	draining atomic.Bool
	listener net.Listener
	adminLn  net.Listener
}

// PublicServer serves the public listener in net/http's place: the edge's
// proxy path (services/compat-edge/internal/proxy), on a server that does
// not allocate per request. It applies the Platform's checks itself and
// hands what it does not serve to the engine.
type PublicServer interface {
	// Serve serves ln until Shutdown or Close, then returns
	// http.ErrServerClosed.
	Serve(ln net.Listener) error
	// Shutdown stops accepting, closes idle connections and waits for the
	// requests in flight, or for ctx.
	Shutdown(ctx context.Context) error
	// Close stops at once, without waiting for the requests in flight.
	Close() error
	// CloseIdle closes the connections that wait between requests, to
	// make room when the listener is at its MaxConnections cap.
	CloseIdle()
}

// SetPublic makes p the public listener's server instead of net/http
// serving the engine. Call it before Run.
func (s *Server) SetPublic(p PublicServer) { s.public = p }

// Platform is the server's per-request checks and records, for a
// PublicServer to apply as the engine's middleware does.
func (s *Server) Platform() *Platform { return s.platform }

// netHTTP is net/http serving the engine, the PublicServer of every
// service but the edge.
type netHTTP struct{ srv *http.Server }

func (n netHTTP) Serve(ln net.Listener) error        { return n.srv.Serve(ln) }
func (n netHTTP) Shutdown(ctx context.Context) error { return n.srv.Shutdown(ctx) }
func (n netHTTP) Close() error                       { return n.srv.Close() }

// CloseIdle turns keep-alives off, which closes the idle connections at
// once (and any still without a request after 5 s), and on again for
// everything after.
func (n netHTTP) CloseIdle() {
	n.srv.SetKeepAlivesEnabled(false)
	n.srv.SetKeepAlivesEnabled(true)
}

// New builds the engine with the platform middleware and the health
// endpoints, and the admin handler with metrics and profiling. Routes are
// added on Router().
func New(cfg Config, deps Deps) *Server {
	gin.SetMode(gin.ReleaseMode)
	s := &Server{cfg: cfg, logger: deps.Logger, checks: deps.Checks, engine: gin.New(), platform: newPlatform(cfg, deps)}
	p := s.platform
	e := s.engine
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true // c.Value and c.Deadline reach the request context
	e.Use(requestid.Middleware())
	if deps.Telemetry != nil && deps.Telemetry.Meter != nil {
		e.Use(requestMetrics(p))
	}
	e.Use(recovery(deps.Logger))
	e.Use(clientAddress(p))
	if deps.Telemetry != nil && deps.Telemetry.Tracer != nil {
		e.Use(serverSpans(p))
	}
	e.Use(accessLog(p))
	e.Use(problem.Middleware(deps.Logger, deps.Mapper))
	e.Use(headerLimit(p))
	e.Use(inFlightLimit(p))
	if p.limiter != nil {
		e.Use(addressLimit(p))
	}
	e.Use(defaultBodyLimit(cfg.MaxBodyBytes))
	e.NoRoute(func(c *gin.Context) {
		problem.Write(c, problem.Newf(problem.NotFound, "No resource at %s.", problem.Clip(c.Request.URL.Path)))
	})
	e.NoMethod(func(c *gin.Context) {
		problem.Write(c, problem.Newf(problem.MethodNotAllowed, "%s is not allowed on %s.", problem.Clip(c.Request.Method), problem.Clip(c.Request.URL.Path)))
	})
	e.GET("/livez", livez)
	e.GET("/readyz", s.readyz)

	admin := http.NewServeMux()
	admin.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	})
	admin.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		status, body := s.readiness(r.Context())
		writeJSON(w, status, body)
	})
	if deps.Telemetry != nil {
		admin.Handle("GET /metrics", deps.Telemetry.MetricsHandler)
	}
	admin.HandleFunc("/debug/pprof/", pprof.Index) // every named profile, e.g. /debug/pprof/heap
	admin.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	admin.HandleFunc("/debug/pprof/profile", pprof.Profile)
	admin.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	admin.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.admin = admin
	return s
}

// Router returns the engine for the service to register its routes on.
func (s *Server) Router() *gin.Engine { return s.engine }

// Admin returns the admin handler: metrics, profiling and the probes.
func (s *Server) Admin() http.Handler { return s.admin }

// HandleAdmin adds a service's own handler to the admin listener, never
// the public port: operator APIs that must not be reachable from outside.
// Call it before Run. The handler authenticates its callers itself.
func (s *Server) HandleAdmin(pattern string, h http.Handler) { s.admin.Handle(pattern, h) }

// Listen binds the public and admin addresses now, so a caller (or a test
// using port 0) knows the ports before Run serves.
func (s *Server) Listen() (net.Addr, error) {
	adminAddr, err := s.cfg.adminAddr()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", s.cfg.Addr, err)
	}
	if adminAddr != "" {
		aln, err := net.Listen("tcp", adminAddr)
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("listening on admin address %s: %w", adminAddr, err)
		}
		s.adminLn = aln
	}
	if s.cfg.MaxConnections > 0 {
		ln = newLimitListener(ln, s.cfg.MaxConnections)
	}
	s.listener = ln
	return ln.Addr(), nil
}

// AdminAddr is the bound admin address after Listen, or nil without one.
func (s *Server) AdminAddr() net.Addr {
	if s.adminLn == nil {
		return nil
	}
	return s.adminLn.Addr()
}

// Run serves until ctx is cancelled, then reports not-ready, stops accepting
// connections and waits up to ShutdownTimeout for in-flight requests. The
// admin listener keeps answering (/readyz says draining) until the public
// one has drained.
func (s *Server) Run(ctx context.Context) error {
	if s.listener == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
	}
	base := func(net.Listener) context.Context { return context.WithoutCancel(ctx) }
	srv := s.public
	if srv == nil {
		srv = netHTTP{&http.Server{
			Handler:           s.engine,
			MaxHeaderBytes:    2 * s.cfg.MaxHeaderBytes,
			ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
			ReadTimeout:       s.cfg.ReadTimeout,
			WriteTimeout:      s.cfg.WriteTimeout,
			IdleTimeout:       s.cfg.IdleTimeout,
			BaseContext:       base,
		}}
	}
	if ll, ok := s.listener.(*limitListener); ok {
		ll.atCap = srv.CloseIdle
	}
	serveErr := make(chan error, 2)
	go func() { serveErr <- srv.Serve(s.listener) }()
	var adminSrv *http.Server
	if s.adminLn != nil {
		adminSrv = &http.Server{
			Handler:           s.admin,
			MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
			ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
			IdleTimeout:       s.cfg.IdleTimeout,
			BaseContext:       base,
		}
		go func() { serveErr <- adminSrv.Serve(s.adminLn) }()
		s.logger.Info("admin server started", "addr", s.adminLn.Addr().String())
	}
	s.logger.Info("http server started", "addr", s.listener.Addr().String())
	select {
	case err := <-serveErr:
		_ = srv.Close()
		if adminSrv != nil {
			_ = adminSrv.Close()
		}
		return fmt.Errorf("serving http: %w", err)
	case <-ctx.Done():
	}

	s.draining.Store(true)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	s.logger.Info("http server draining")
	drainErr := srv.Shutdown(shutdownCtx)
	if adminSrv != nil {
		if err := adminSrv.Shutdown(shutdownCtx); err != nil {
			s.logger.Warn("admin server did not stop cleanly", "err", err)
		}
	}
	if drainErr != nil {
		return fmt.Errorf("draining http server: %w", drainErr)
	}
	servers := 1
	if adminSrv != nil {
		servers = 2
	}
	for range servers {
		if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serving http: %w", err)
		}
	}
	s.logger.Info("http server stopped")
	return nil
}

// Draining reports whether shutdown has begun.
func (s *Server) Draining() bool { return s.draining.Load() }

func livez(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) }

func (s *Server) readyz(c *gin.Context) {
	status, body := s.readiness(c.Request.Context())
	c.JSON(status, body)
}

// advisoryCheckTimeout bounds an advisory check, well inside the
// kubelet's probe timeout (3 s in the chart): a dependency that is away
// may not answer at all (a stopped broker, a network
// partition), and while the API-gating checks answer at once its answer
// must not make /readyz late, which the kubelet would count as not ready.
// Slower than this, it is reported unavailable: degraded, still ready.
const advisoryCheckTimeout = 500 * time.Millisecond

// readiness is 200 when every dependency the API needs answers and the
// server is not draining, so the load balancer stops sending before
// shutdown; an advisory dependency that fails makes it "degraded", still
// 200.
func (s *Server) readiness(ctx context.Context) (int, map[string]any) {
	if s.draining.Load() {
		return http.StatusServiceUnavailable, map[string]any{"status": "draining"}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(s.checks))
	for _, ch := range s.checks {
		go func() {
			probe := ctx
			if ch.Advisory {
				var cancel context.CancelFunc
				probe, cancel = context.WithTimeout(ctx, advisoryCheckTimeout)
				defer cancel()
			}
			results <- result{ch.Name, ch.Probe(probe)}
		}()
	}
	advisory := map[string]bool{}
	for _, ch := range s.checks {
		advisory[ch.Name] = ch.Advisory
	}
	checks := map[string]string{}
	status := "ready"
	for range s.checks {
		r := <-results
		if r.err == nil {
			checks[r.name] = "ok"
			continue
		}
		checks[r.name] = "unavailable"
		s.logger.WarnContext(ctx, "readiness check failed", "check", r.name, "advisory", advisory[r.name], "err", r.err)
		switch {
		case !advisory[r.name]:
			status = "unavailable"
		case status == "ready":
			status = "degraded"
		}
	}
	if status == "unavailable" {
		return http.StatusServiceUnavailable, map[string]any{"status": status, "checks": checks}
	}
	return http.StatusOK, map[string]any{"status": status, "checks": checks}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// ConfigFromEnv reads HTTP_ADDR (default defaultAddr), ADMIN_ADDR,
// HTTP_MAX_BODY_BYTES, HTTP_MAX_HEADER_BYTES, HTTP_MAX_IN_FLIGHT,
// HTTP_MAX_CONNECTIONS, HTTP_TRUSTED_PROXIES, HTTP_TRUSTED_HOPS, RATE_LIMIT_ADDRESS_RATE,
// _PERIOD and _BURST, and HTTP_SHUTDOWN_TIMEOUT over the defaults.
// docs/security-limits.md lists them.
func ConfigFromEnv(r *envconf.Reader, defaultAddr string) Config {
	c := DefaultConfig()
	c.Addr = r.String("HTTP_ADDR", defaultAddr)
	c.AdminAddr = r.String("ADMIN_ADDR", "")
	c.MaxBodyBytes = int64(r.Int("HTTP_MAX_BODY_BYTES", int(c.MaxBodyBytes)))
	c.MaxHeaderBytes = r.Int("HTTP_MAX_HEADER_BYTES", c.MaxHeaderBytes)
	c.MaxInFlight = r.Int("HTTP_MAX_IN_FLIGHT", c.MaxInFlight)
	c.MaxConnections = r.Int("HTTP_MAX_CONNECTIONS", c.MaxConnections)
	c.TrustedProxies = r.List("HTTP_TRUSTED_PROXIES", nil)
	c.TrustedHops = r.Int("HTTP_TRUSTED_HOPS", 0)
	c.AddressRate = ratelimit.FromEnv(r, "RATE_LIMIT_ADDRESS", c.AddressRate)
	c.ShutdownTimeout = r.Duration("HTTP_SHUTDOWN_TIMEOUT", c.ShutdownTimeout)
	return c
}
