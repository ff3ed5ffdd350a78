package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

// devFunding is what each public development account holds on each network:
// 1000 test USDC, a hundred thousand reports.
const devFunding = 1000 * 1_000_000

// localFacilitator is the x402 facilitator of the stack, run in this process:
// it checks signatures for real and settles into a Redis ledger, not a chain.
type localFacilitator struct {
	url  string
	rdb  redis.UniversalClient
	stop context.CancelFunc
	done chan error
}

func startFacilitator(ctx context.Context, cfg config, dev *devRedis) (*localFacilitator, error) {
	rdb := dev.client()
	ledger := localfacilitator.NewLedger(rdb)
	if _, err := localfacilitator.FundDevAccounts(ctx, ledger, x402.KnownUSDC(), devFunding); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("funding the development accounts: %w", err)
	}
	httpCfg := httpserver.DefaultConfig()
	httpCfg.Addr = "127.0.0.1:" + strconv.Itoa(cfg.facilitatorPort())
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	srv := httpserver.New(httpCfg, httpserver.Deps{Service: "facilitator", Logger: logger,
		Checks: []httpserver.Check{{Name: "redis", Probe: redisclient.Ping(rdb)}}})
	server, err := localfacilitator.NewServer(localfacilitator.DefaultConfig(), ledger, logger)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	server.Register(srv.Router())
	if _, err := srv.Listen(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("local facilitator: %w", err)
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	f := &localFacilitator{url: "http://" + httpCfg.Addr, rdb: rdb, stop: stop, done: make(chan error, 1)}
	go func() { f.done <- srv.Run(runCtx) }()
	return f, nil
}

func (f *localFacilitator) close() {
	f.stop()
	<-f.done
	f.rdb.Close()
}
