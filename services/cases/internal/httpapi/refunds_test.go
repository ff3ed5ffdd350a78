package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
	"github.com/pcourt/pcourt/services/cases/internal/rails"
)

// refundNetwork is the sandbox network the stack's refunds settle on.
const refundNetwork = "eip155:84532"

// refunds is the stack's x402r rail: the real local facilitator over real
// HTTP on the stack's redis-server, and a refund operator holding 1,000
// USDC.
func (s *stack) refunds(t testing.TB) afterawardflow.Refunds {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	s.ledger = localfacilitator.NewLedger(s.rdb)
	cfg := localfacilitator.DefaultConfig()
	cfg.Token = envconf.Secret("stack-facilitator-token")
	hs := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "facilitator", Logger: logger})
	server, err := localfacilitator.NewServer(cfg, s.ledger, logger)
	require.NoError(t, err)
	server.Register(hs.Router())
	ts := httptest.NewServer(hs.Router())
	t.Cleanup(ts.Close)

	client, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: ts.URL, Authorization: envconf.Secret("Bearer stack-facilitator-token"), Timeout: 5 * time.Second})
	require.NoError(t, err)
	s.facilitator = client
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	s.operator = crypto.PubkeyToAddress(key.PublicKey).Hex()
	rail, err := rails.NewX402Refunds(rails.Config{Networks: []string{refundNetwork}}, client, key)
	require.NoError(t, err)
	s.fundOperator(t, 1_000_000_000)
	return rail
}

// appealFees is how the stack collects appeal fees: with x402, through
// the platform's settlement journal on the stack's redis-server and the
// same local facilitator, to a payee of its own. s.refunds runs first.
func (s *stack) appealFees(t testing.TB) (afterawardflow.Payments, afterawardflow.FeeConfig) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	payments, err := journal.New(journal.Config{Owner: afterawardflow.FeeOwner, Lease: 30 * time.Second}, s.rdb, s.facilitator, logger)
	require.NoError(t, err)
	s.feeJournal = payments
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	s.feePayee = crypto.PubkeyToAddress(key.PublicKey).Hex()
	return payments, afterawardflow.FeeConfig{PayTo: s.feePayee, Networks: map[string][]string{x402.EnvironmentSandbox: {refundNetwork}}, MaxTimeoutSeconds: 300}
}

func (s *stack) usdc(t testing.TB) x402.Asset {
	t.Helper()
	a, ok := x402.USDC(refundNetwork)
	require.True(t, ok)
	return a
}

func (s *stack) fundOperator(t testing.TB, atomic uint64) {
	t.Helper()
	require.NoError(t, s.ledger.Fund(context.Background(), refundNetwork, s.usdc(t).Address.Hex(), s.operator, atomic))
}

func (s *stack) balance(t testing.TB, addr string) uint64 {
	t.Helper()
	n, err := s.ledger.Balance(context.Background(), refundNetwork, s.usdc(t).Address.Hex(), addr)
	require.NoError(t, err)
	return n
}

func (s *stack) settlements(t testing.TB) []localfacilitator.Settlement {
	t.Helper()
	out, err := s.ledger.Settlements(context.Background(), refundNetwork, s.usdc(t).Address.Hex())
	require.NoError(t, err)
	return out
}
