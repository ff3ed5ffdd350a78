package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/tools/adjudicator/agent"
)

// adjudicatorDescription marks the endpoint that make run registers for
// the reference adjudicator, so that a later start finds it again.
const adjudicatorDescription = "make run: the reference adjudicator"

// devAdjudicator is the reference AI adjudicator (tools/adjudicator/agent),
// run in this process as the dev tribunal's adjudicator: with no model
// configured it drafts with the deterministic rubric, the configuration
// mintCredentials pinned in the pool. Told by a signed
// adjudication_requested event, it reads the case's review package through
// the edge and files its proposal, which the dev reviewer then signs off.
type devAdjudicator struct {
	url   string
	ln    net.Listener
	srv   *http.Server
	agent *agent.Agent
	log   *os.File
	done  chan error
}

// listenAdjudicator takes the adjudicator's port, the edge's + 6 (a port
// of the stack's block no service uses); start serves on it once the
// endpoint id it verifies against is known.
func listenAdjudicator(cfg config) (*devAdjudicator, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", cfg.adjudicatorPort()))
	if err != nil {
		return nil, fmt.Errorf("reference adjudicator: %w", err)
	}
	return &devAdjudicator{url: "http://" + ln.Addr().String() + "/pcourt-events", ln: ln, done: make(chan error, 1)}, nil
}

// start registers the adjudicator's callback endpoint with its own token,
// through the edge like any tribunal member (one endpoint across restarts,
// as the development receiver's), subscribed to adjudication_requested,
// and serves the agent's handler for it. The agent's log goes to
// <dir>/logs/adjudicator.log as JSON lines, and to out as
// "adjudicator | <msg> <attrs>" lines, as the verified webhooks are.
func (a *devAdjudicator) start(ctx context.Context, cfg config, token string, out io.Writer) (string, error) {
	base := fmt.Sprintf("http://127.0.0.1:%d", cfg.EdgePort)
	api := devAPI{base: base + "/api/v2/webhooks", token: token}
	endpointID, err := claimEndpoint(ctx, api, a.url, adjudicatorDescription, []string{agent.EventAdjudicationRequested})
	if err != nil {
		return "", fmt.Errorf("the reference adjudicator: %w", err)
	}
	logPath := filepath.Join(cfg.Dir, "logs", "adjudicator.log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", err
	}
	a.log = f
	noTime := func(groups []string, attr slog.Attr) slog.Attr {
		if len(groups) == 0 && attr.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return attr
	}
	logger := slog.New(slog.NewMultiHandler(
		slog.NewJSONHandler(f, nil).WithAttrs([]slog.Attr{slog.String("service", "adjudicator")}),
		slog.NewTextHandler(&prefixWriter{prefix: "adjudicator | ", w: out}, &slog.HandlerOptions{ReplaceAttr: noTime}),
	))
	a.agent, err = agent.New(agent.Config{
		APIURL:      base,
		Token:       envconf.Secret(token),
		EndpointID:  endpointID,
		Environment: signature.Sandbox,
		Listen:      a.ln.Addr().String(),
		Logger:      logger,
	})
	if err != nil {
		return "", err
	}
	logger.Info("adjudicator listening", "url", a.url, "endpoint_id", endpointID,
		"provider", a.agent.Configuration().Provider, "configuration_digest", a.agent.ConfigurationDigest())
	a.srv = &http.Server{Handler: a.agent.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second}
	go func() { a.done <- a.srv.Serve(a.ln) }()
	return endpointID, nil
}

// close stops the callbacks, then lets the agent finish what it runs.
func (a *devAdjudicator) close() {
	if a.log != nil {
		defer a.log.Close()
	}
	if a.srv == nil {
		_ = a.ln.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = a.srv.Shutdown(ctx)
	<-a.done // http.ErrServerClosed: the stack is stopping
	_ = a.agent.Shutdown(ctx)
}
