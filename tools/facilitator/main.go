// Command facilitator is the local x402 facilitator of dev and tests: the
// version 2 facilitator API (POST /verify, POST /settle, GET /supported)
// for the exact scheme on EVM, with real EIP-712 signature checks and a
// Redis ledger in place of a chain. Production points the readiness service
// at a real facilitator instead.
//
// With FACILITATOR_FUND_DEV_ACCOUNTS=true it tops up the ten public
// Anvil/Hardhat development accounts to FACILITATOR_DEV_FUNDING on every
// supported network at start, so that a wallet holding one of those public
// keys can pay at once.
//
// It listens on loopback (127.0.0.1:8085) by default. Anywhere else it
// refuses to start without FACILITATOR_TOKEN, the bearer token every caller
// must send: whoever reaches it can settle payments into its ledger.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/telemetry"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "facilitator: %v\n", err)
		os.Exit(1)
	}
}

// config is everything the facilitator reads from its environment.
type config struct {
	HTTP        httpserver.Config
	Redis       redisclient.Config
	Facilitator localfacilitator.Config
	// FundDevAccounts tops up the public development accounts at start.
	FundDevAccounts bool
	// DevFunding is the balance each development account is topped up to,
	// in atomic units (1000 USDC by default).
	DevFunding int
	LogLevel   string
}

// LogValue is what the start-up line shows: the settings, secrets masked,
// networks by name (the clock in localfacilitator.Config does not print).
func (c config) LogValue() slog.Value {
	networks := make([]string, len(c.Facilitator.Assets))
	for i, a := range c.Facilitator.Assets {
		networks[i] = a.Network
	}
	return slog.GroupValue(
		slog.Any("http", c.HTTP),
		slog.Any("redis", c.Redis),
		slog.Any("networks", networks),
		slog.Any("token", c.Facilitator.Token),
		slog.Bool("fund_dev_accounts", c.FundDevAccounts),
		slog.Int("dev_funding", c.DevFunding),
		slog.String("log_level", c.LogLevel),
	)
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{
		HTTP:            httpserver.DefaultConfig(),
		Redis:           redisclient.FromEnv(r),
		Facilitator:     localfacilitator.DefaultConfig(),
		FundDevAccounts: r.Bool("FACILITATOR_FUND_DEV_ACCOUNTS", false),
		DevFunding:      r.Int("FACILITATOR_DEV_FUNDING", 1000*1_000_000),
		LogLevel:        r.String("LOG_LEVEL", "info"),
	}
	// Loopback by default: the facilitator moves (test) money for anyone
	// who can reach it.
	cfg.HTTP.Addr = r.String("FACILITATOR_ADDR", "127.0.0.1:8085")
	cfg.HTTP.AdminAddr = r.String("ADMIN_ADDR", "") // metrics and pprof; empty is the port + 1000
	cfg.Facilitator.Token = r.Secret("FACILITATOR_TOKEN")
	errs := []error{r.Err(), cfg.HTTP.Validate(), cfg.Redis.Validate(), cfg.Facilitator.Validate()}
	if !loopback(cfg.HTTP.Addr) && cfg.Facilitator.Token.Reveal() == "" {
		errs = append(errs, fmt.Errorf("FACILITATOR_ADDR=%q listens beyond loopback: set FACILITATOR_TOKEN, which every caller must then send as a bearer token", cfg.HTTP.Addr))
	}
	if cfg.DevFunding < 0 || uint64(cfg.DevFunding) > localfacilitator.MaxAmount {
		errs = append(errs, fmt.Errorf("FACILITATOR_DEV_FUNDING=%d must be between 0 and %d", cfg.DevFunding, localfacilitator.MaxAmount))
	}
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

// loopback reports whether addr listens on a loopback interface only. An
// empty host (":8085") listens on every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	logger := logging.New(stdout, "facilitator", logging.ParseLevel(cfg.LogLevel))
	logger.Info("starting", "version", version, "config", cfg)

	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "facilitator", ServiceVersion: version}, getenv)
	if err != nil {
		return err
	}
	defer shutdown(logger, "telemetry", tel.Shutdown)

	rdb := redisclient.New(cfg.Redis)
	defer rdb.Close()
	ledger := localfacilitator.NewLedger(rdb)

	if cfg.FundDevAccounts {
		added, err := localfacilitator.FundDevAccounts(ctx, ledger, cfg.Facilitator.Assets, uint64(cfg.DevFunding))
		if err != nil {
			return err
		}
		logger.Info("development accounts funded", "accounts", len(localfacilitator.DevAccounts()),
			"networks", len(cfg.Facilitator.Assets), "target", cfg.DevFunding, "added", added)
	}

	srv := httpserver.New(cfg.HTTP, httpserver.Deps{
		Service:   "facilitator",
		Logger:    logger,
		Telemetry: tel,
		Checks:    []httpserver.Check{{Name: "redis", Probe: redisclient.Ping(rdb)}},
	})
	server, err := localfacilitator.NewServer(cfg.Facilitator, ledger, logger)
	if err != nil {
		return err
	}
	server.Register(srv.Router())

	return lifecycle.Run(ctx, logger, lifecycle.Component{Name: "http", Run: srv.Run})
}

// shutdown runs a deferred stop step and logs, rather than loses, its error.
func shutdown(logger *slog.Logger, what string, fn func(context.Context) error) {
	if err := fn(context.Background()); err != nil {
		logger.Error("shutdown failed", "component", what, "err", err)
	}
}
