package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

// syncBuffer is the log sink: the server writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRunServesAndFundsTheDevAccounts(t *testing.T) {
	srv := redistest.Start(t)
	addr, adminAddr := freeAddr(t), freeAddr(t)
	admin := "http://" + adminAddr
	env := map[string]string{
		"FACILITATOR_ADDR":              addr,
		"ADMIN_ADDR":                    adminAddr,
		"REDIS_ADDRS":                   srv.Addr,
		"FACILITATOR_FUND_DEV_ACCOUNTS": "true",
		"FACILITATOR_DEV_FUNDING":       "2500000",
		"FACILITATOR_TOKEN":             "dev-token",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, func(k string) string { return env[k] }, logs) }()

	base := "http://" + addr
	waitReady(t, base+"/readyz", done)

	client, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: base, Authorization: "Bearer dev-token"})
	require.NoError(t, err)
	supported, err := client.Supported(ctx)
	require.NoError(t, err)
	var networks []string
	for _, k := range supported.Kinds {
		require.Equal(t, x402.SchemeExact, k.Scheme)
		networks = append(networks, k.Network)
	}
	require.Equal(t, []string{"eip155:8453", "eip155:84532"}, networks)

	unauth, err := http.Get(base + "/supported")
	require.NoError(t, err)
	unauth.Body.Close()
	require.Equal(t, http.StatusUnauthorized, unauth.StatusCode, "FACILITATOR_TOKEN is enforced")

	ledger := localfacilitator.NewLedger(srv.Client(t))
	for _, asset := range x402.KnownUSDC() {
		for _, acct := range localfacilitator.DevAccounts() {
			n, err := ledger.Balance(ctx, asset.Network, asset.Address.Hex(), acct.Address.Hex())
			require.NoError(t, err)
			require.Equal(t, uint64(2_500_000), n, "%s on %s", acct.Address.Hex(), asset.Network)
		}
	}

	metrics, err := http.Get(admin + "/metrics")
	require.NoError(t, err)
	metrics.Body.Close()
	require.Equal(t, http.StatusOK, metrics.StatusCode)
	public, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	public.Body.Close()
	require.Equal(t, http.StatusNotFound, public.StatusCode, "metrics are not on the public port")

	cancel()
	require.NoError(t, <-done)
	require.Contains(t, logs.String(), `"msg":"development accounts funded"`)
	require.NotContains(t, logs.String(), "dev-token", "the token never reaches the log")
}

func TestRunRefusesABadConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"funding flag not a boolean", map[string]string{"FACILITATOR_FUND_DEV_ACCOUNTS": "yes please"}, "FACILITATOR_FUND_DEV_ACCOUNTS"},
		{"funding not an integer", map[string]string{"FACILITATOR_DEV_FUNDING": "1000 USDC"}, "FACILITATOR_DEV_FUNDING"},
		{"funding above the ledger limit", map[string]string{"FACILITATOR_DEV_FUNDING": strconv.FormatUint(localfacilitator.MaxAmount+1, 10)}, "FACILITATOR_DEV_FUNDING"},
		{"negative funding", map[string]string{"FACILITATOR_DEV_FUNDING": "-1"}, "FACILITATOR_DEV_FUNDING"},
		{"every interface without a token", map[string]string{"FACILITATOR_ADDR": ":8085"}, "FACILITATOR_TOKEN"},
		{"a public address without a token", map[string]string{"FACILITATOR_ADDR": "10.0.0.7:8085"}, "FACILITATOR_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), func(k string) string { return tt.env[k] }, io.Discard)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// waitReady polls url until it answers 200, failing if run returns first.
func waitReady(t *testing.T, url string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		require.True(t, time.Now().Before(deadline), "not ready after 10s: %v", err)
		select {
		case err := <-done:
			t.Fatalf("run returned before it was ready: %v", err)
		case <-tick.C:
		}
	}
}

func TestListenAddressAndToken(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		addr string // "" when refused
	}{
		{"loopback by default", nil, "127.0.0.1:8085"},
		{"loopback needs no token", map[string]string{"FACILITATOR_ADDR": "localhost:9000"}, "localhost:9000"},
		{"IPv6 loopback", map[string]string{"FACILITATOR_ADDR": "[::1]:8085"}, "[::1]:8085"},
		{"every interface with a token", map[string]string{"FACILITATOR_ADDR": ":8085", "FACILITATOR_TOKEN": "s3cret"}, ":8085"},
		{"every interface without one", map[string]string{"FACILITATOR_ADDR": "0.0.0.0:8085"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(func(k string) string { return tc.env[k] })
			if tc.addr == "" {
				require.ErrorContains(t, err, "FACILITATOR_TOKEN")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.addr, cfg.HTTP.Addr)
		})
	}
}
