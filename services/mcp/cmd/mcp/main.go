// Command mcp is the MCP server (docs/mcp.md): an AI agent acting for its
// account calls the platform through tools over MCP's streamable HTTP
// transport at /mcp, with an OAuth token the accounts service issued for
// this server. Each tool calls the public API through the edge, like an
// account's own client, with a token for the API that the agent's token
// is exchanged for (RFC 8693), so the agent reaches nothing its account
// could not reach itself.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/mcp/internal/apiclient"
	"github.com/pcourt/pcourt/services/mcp/internal/exchange"
	"github.com/pcourt/pcourt/services/mcp/internal/httpapi"
	"github.com/pcourt/pcourt/services/mcp/internal/resources"
	"github.com/pcourt/pcourt/services/mcp/internal/tools"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "mcp: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	base, err := service.Start(ctx, service.Options{
		Name: "mcp", Version: version, Config: cfg.Service, FullConfig: cfg, Getenv: getenv, Stdout: stdout,
	})
	if err != nil {
		return err
	}
	defer base.Close()

	hc := &http.Client{
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: 20 * time.Second},
		// The API answers; it never sends the server elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	credentials := base.Credentials()
	api, exchanger := apiclient.New(cfg.APIURL, hc), exchange.New(cfg.Exchange, hc, nil)
	reader := &resources.Reader{API: api, Exchange: exchanger, Logger: base.Logger}
	server, err := tools.NewServer(version, tools.Deps{
		API:         api,
		Exchange:    exchanger,
		Credentials: credentials,
		Meter:       base.Telemetry.Meter,
		Logger:      base.Logger,
		Resources:   reader,
	})
	if err != nil {
		return err
	}
	hub, err := resources.NewHub(cfg.Subscriptions, reader, credentials, base.Telemetry.Meter, base.Logger)
	if err != nil {
		return err
	}

	// Every replica reads every case event, in a group of its own from the
	// topic's end: it tells the streams it holds, and an event from before
	// it started concerns no stream it holds. It never dead-letters (its
	// handler never fails), so its dead-letter producer writes nothing.
	deadLetters, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: cfg.Service.KafkaBrokers, Security: cfg.Service.KafkaSecurity, ClientID: "mcp", TracerProvider: base.Telemetry.Tracer})
	if err != nil {
		return err
	}
	defer deadLetters.Close()
	consumer, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: cfg.Service.KafkaBrokers, Security: cfg.Service.KafkaSecurity, ClientID: "mcp", GroupID: cfg.EventsGroup, Topic: resources.Topic,
		StartOffset: kafka.LastOffset, CommitInterval: time.Second,
	}, hub.HandleCaseEvent, deadLetters, base.Logger, base.Telemetry.Tracer)
	if err != nil {
		return err
	}

	srv := base.Server(nil, base.KafkaCheck(), httpserver.Check{Name: "case-events-consumer", Probe: consumer.Probe, Advisory: true})
	if err := httpapi.Register(srv.Router(), cfg.HTTP, httpapi.Deps{Credentials: credentials, Server: server, Subscriptions: hub}); err != nil {
		return err
	}
	// The streams end first: the HTTP server's drain waits for every
	// request, and a stream would not end of itself.
	return lifecycle.Run(ctx, base.Logger,
		lifecycle.Component{Name: "subscriptions", Run: hub.Run},
		lifecycle.Component{Name: "http", Run: srv.Run},
		lifecycle.Component{Name: "case-events-consumer", Run: consumer.Run},
	)
}
