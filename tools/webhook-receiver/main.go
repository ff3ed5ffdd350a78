// Command webhook-receiver is a partner-side receiver of pcourt case event
// callbacks, for trying an integration end to end: it verifies each
// delivery's signature against the published key set, deduplicates by event
// id, and prints every verified event on stdout as one JSON line (a test
// event is also logged on stderr as one). It serves one endpoint: -endpoint
// is the id registration returned for it, and a delivery signed for any
// other endpoint is refused (recipient_mismatch). Refusals are answered
// 400/401 with their reason and logged on stderr.
//
//	go run ./tools/webhook-receiver -jwks http://127.0.0.1:8080/api/webhooks/keys -endpoint we_… -addr 127.0.0.1:8090
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/receiver"
	"github.com/pcourt/pcourt/libs/webhook/signature"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintf(os.Stderr, "webhook-receiver: %v\n", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	JWKS        string
	Addr        string
	Path        string
	Environment string
	EndpointID  string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.JWKS, "jwks", "http://127.0.0.1:8080/api/webhooks/keys", "URL of the published verification key set")
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8090", "address to listen on")
	fs.StringVar(&c.Path, "path", "/", "path that receives the callbacks")
	fs.StringVar(&c.Environment, "env", "", "accept only key ids of this environment (sandbox or live); empty accepts both")
	fs.StringVar(&c.EndpointID, "endpoint", "", "id of the endpoint this receiver serves (we_…, as registration returned it); required")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.EndpointID == "" {
		return c, errors.New("-endpoint is required: the id of the endpoint this receiver serves, so that deliveries signed for other endpoints are refused")
	}
	return c, nil
}

// printer writes each verified event as one compact JSON line.
type printer struct {
	mu  sync.Mutex
	out io.Writer
	log *slog.Logger
}

func (p *printer) print(_ context.Context, d receiver.Delivery) error {
	if d.Test {
		p.log.Info("test event verified (x-pc-test: true): not a case fact", slog.String("event_id", d.Event.EventID), slog.String("type", d.Event.Type))
	}
	var line bytes.Buffer
	if err := json.Compact(&line, d.Body); err != nil {
		return fmt.Errorf("compacting event %s: %w", d.Event.EventID, err)
	}
	line.WriteByte('\n')
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := p.out.Write(line.Bytes())
	return err
}

// run serves until ctx ends. onListen, when not nil, is told the address
// actually bound (useful with port 0).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, onListen func(addr string)) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	keys, err := receiver.NewJWKSCache(cfg.JWKS, receiver.JWKSConfig{})
	if err != nil {
		return err
	}
	p := &printer{out: stdout, log: log}
	h, err := receiver.NewHandler(keys, p.print, receiver.Config{
		EndpointID:  cfg.EndpointID,
		Environment: signature.Environment(cfg.Environment),
		Logger:      log,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(cfg.Path, h)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second}
	log.Info("webhook receiver listening", slog.String("addr", ln.Addr().String()), slog.String("path", cfg.Path), slog.String("jwks", cfg.JWKS),
		slog.String("endpoint", cfg.EndpointID))
	if onListen != nil {
		onListen(ln.Addr().String())
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return h.Shutdown(shutdownCtx)
}
