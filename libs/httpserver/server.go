// Package httpserver is the HTTP front of every service: a Gin engine with the
// platform's middleware (request id, panic recovery as a problem, OpenTelemetry,
// access log, problem rendering, body-size limit), health and metrics
// endpoints, and a lifecycle that drains in-flight requests on shutdown.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/telemetry"
)

// Config is the HTTP server's configuration.
type Config struct {
	Addr              string
	MaxBodyBytes      int64
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
	case c.ReadHeaderTimeout <= 0 || c.ShutdownTimeout <= 0:
		return errors.New("http: timeouts must be positive")
	}
	return nil
}

// Check is one dependency that /readyz probes, such as Redis or Kafka.
type Check struct {
	Name  string
	Probe func(context.Context) error
}

// Deps are what the server needs from the service.
type Deps struct {
	Service   string
	Logger    *slog.Logger
	Telemetry *telemetry.Providers
	Mapper    problem.Mapper
	Checks    []Check
}

// Server is a service's HTTP server.
type Server struct {
	cfg      Config
	logger   *slog.Logger
	engine   *gin.Engine
	checks   []Check
	draining atomic.Bool
	listener net.Listener
}

// New builds the engine with the platform middleware and the health and
// metrics endpoints. Routes are added on Router().
func New(cfg Config, deps Deps) *Server {
	gin.SetMode(gin.ReleaseMode)
	s := &Server{cfg: cfg, logger: deps.Logger, checks: deps.Checks, engine: gin.New()}
	e := s.engine
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true // c.Value and c.Deadline reach the request context
	e.Use(requestid.Middleware())
	e.Use(recovery(deps.Logger))
	if deps.Telemetry != nil {
		e.Use(otelgin.Middleware(deps.Service,
			otelgin.WithTracerProvider(deps.Telemetry.Tracer),
			otelgin.WithMeterProvider(deps.Telemetry.Meter),
			otelgin.WithPropagators(deps.Telemetry.Propagator),
			otelgin.WithGinFilter(func(c *gin.Context) bool { return !isOperational(c.Request.URL.Path) }),
		))
	}
	e.Use(accessLog(deps.Logger))
	e.Use(problem.Middleware(deps.Logger, deps.Mapper))
	e.Use(BodyLimit(cfg.MaxBodyBytes))

	e.NoRoute(func(c *gin.Context) {
		problem.Write(c, problem.Newf(problem.NotFound, "No resource at %s.", c.Request.URL.Path))
	})
	e.NoMethod(func(c *gin.Context) {
		problem.Write(c, problem.Newf(problem.MethodNotAllowed, "%s is not allowed on %s.", c.Request.Method, c.Request.URL.Path))
	})
	e.GET("/livez", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	e.GET("/readyz", s.readyz)
	if deps.Telemetry != nil {
		e.GET("/metrics", gin.WrapH(deps.Telemetry.MetricsHandler))
	}
	return s
}

// Router returns the engine for the service to register its routes on.
func (s *Server) Router() *gin.Engine { return s.engine }

// Listen binds the address now, so a caller (or a test using port 0) knows
// the port before Run serves.
func (s *Server) Listen() (net.Addr, error) {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", s.cfg.Addr, err)
	}
	s.listener = ln
	return ln.Addr(), nil
}

// Run serves until ctx is cancelled, then reports not-ready, stops accepting
// connections and waits up to ShutdownTimeout for in-flight requests.
func (s *Server) Run(ctx context.Context) error {
	if s.listener == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
	}
	srv := &http.Server{
		Handler:           s.engine,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(s.listener) }()
	s.logger.Info("http server started", "addr", s.listener.Addr().String())

	select {
	case err := <-serveErr:
		return fmt.Errorf("serving http: %w", err)
	case <-ctx.Done():
	}
	s.draining.Store(true)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	s.logger.Info("http server draining")
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("draining http server: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving http: %w", err)
	}
	s.logger.Info("http server stopped")
	return nil
}

// readyz reports 200 only when every dependency answers and the server is
// not draining, so the load balancer stops sending before shutdown.
func (s *Server) readyz(c *gin.Context) {
	if s.draining.Load() {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "draining"})
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(s.checks))
	for _, ch := range s.checks {
		go func() { results <- result{ch.Name, ch.Probe(ctx)} }()
	}
	checks := gin.H{}
	ready := true
	for range s.checks {
		r := <-results
		if r.err != nil {
			ready = false
			checks[r.name] = "unavailable"
			s.logger.WarnContext(c.Request.Context(), "readiness check failed", "check", r.name, "err", r.err)
			continue
		}
		checks[r.name] = "ok"
	}
	if !ready {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "checks": checks})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "checks": checks})
}

func isOperational(path string) bool {
	return path == "/livez" || path == "/readyz" || path == "/metrics"
}

// ConfigFromEnv reads HTTP_ADDR (default defaultAddr), HTTP_MAX_BODY_BYTES and
// HTTP_SHUTDOWN_TIMEOUT over the defaults.
func ConfigFromEnv(r *envconf.Reader, defaultAddr string) Config {
	c := DefaultConfig()
	c.Addr = r.String("HTTP_ADDR", defaultAddr)
	c.MaxBodyBytes = int64(r.Int("HTTP_MAX_BODY_BYTES", int(c.MaxBodyBytes)))
	c.ShutdownTimeout = r.Duration("HTTP_SHUTDOWN_TIMEOUT", c.ShutdownTimeout)
	return c
}
