package main

import (
	"encoding/hex"
	"io"
	"log/slog"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

// The refund rail is off without an operator key, and on with a valid one;
// every half-configured or dangerous rail refuses to start.
func TestTheRefundRailIsOptionalAndNeverHalfConfigured(t *testing.T) {
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	operator := hex.EncodeToString(crypto.FromECDSA(key))
	devKey := hex.EncodeToString(crypto.FromECDSA(localfacilitator.DevAccounts()[9].Key))
	for _, tc := range []struct {
		name string
		env  map[string]string
		ok   bool
		on   bool
	}{
		{"not configured", nil, true, false},
		{"a key and a facilitator", map[string]string{"X402R_OPERATOR_KEY": operator, "FACILITATOR_URL": "http://127.0.0.1:8085"}, true, true},
		{"a 0x key", map[string]string{"X402R_OPERATOR_KEY": "0x" + operator, "FACILITATOR_URL": "http://127.0.0.1:8085"}, true, true},
		{"a key without a facilitator", map[string]string{"X402R_OPERATOR_KEY": operator}, false, false},
		{"a key that is not one", map[string]string{"X402R_OPERATOR_KEY": "0xnot-a-key", "FACILITATOR_URL": "http://127.0.0.1:8085"}, false, false},
		{"a network without USDC", map[string]string{"X402R_OPERATOR_KEY": operator, "FACILITATOR_URL": "http://127.0.0.1:8085", "X402R_NETWORKS": "eip155:1"}, false, false},
		{"a development key on a test network", map[string]string{"X402R_OPERATOR_KEY": devKey, "FACILITATOR_URL": "http://127.0.0.1:8085"}, true, true},
		{"a development key on a main network", map[string]string{"X402R_OPERATOR_KEY": devKey, "FACILITATOR_URL": "http://127.0.0.1:8085", "X402R_NETWORKS": "eip155:84532,eip155:8453"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(withKeys(tc.env))
			if !tc.ok {
				require.Error(t, err)
				require.NotContains(t, err.Error(), operator, "the key never appears in an error")
				return
			}
			require.NoError(t, err)
			rail, err := newRefundRail(cfg.Refunds, slog.New(slog.NewTextHandler(io.Discard, nil)))
			require.NoError(t, err)
			require.Equal(t, tc.on, rail != nil)
			require.NotContains(t, cfg.Refunds.OperatorKey.String(), operator, "the key never prints")
		})
	}
}
