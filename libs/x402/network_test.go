package x402_test

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
)

func TestEVMChainID(t *testing.T) {
	tests := []struct {
		network string
		want    uint64
		wantErr bool
	}{
		{network: "eip155:8453", want: 8453},
		{network: "eip155:84532", want: 84532},
		{network: "eip155:1", want: 1},
		{network: "eip155:18446744073709551615", want: 18446744073709551615},
		{network: "eip155:18446744073709551616", wantErr: true},
		{network: "eip155:0", wantErr: true},
		{network: "eip155:08453", wantErr: true},
		{network: "eip155:-1", wantErr: true},
		{network: "eip155:+1", wantErr: true},
		{network: "eip155:0x2105", wantErr: true},
		{network: "eip155:", wantErr: true},
		{network: "EIP155:8453", wantErr: true},
		{network: "8453", wantErr: true},
		{network: "base", wantErr: true},
		{network: "eip155:8453:1", wantErr: true},
		{network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", wantErr: true},
		{network: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.network, func(t *testing.T) {
			got, err := x402.EVMChainID(tt.network)
			if tt.wantErr {
				require.ErrorIs(t, err, x402.ErrInvalidNetwork)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParseNetwork(t *testing.T) {
	tests := []struct {
		in      string
		want    x402.Network
		wantErr bool
	}{
		{in: "eip155:8453", want: x402.Network{Namespace: "eip155", Reference: "8453"}},
		{in: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", want: x402.Network{Namespace: "solana", Reference: "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}},
		{in: "ach:us", want: x402.Network{Namespace: "ach", Reference: "us"}},
		{in: "ab:1", wantErr: true},
		{in: "abcdefghi:1", wantErr: true},
		{in: "Eip155:1", wantErr: true},
		{in: "eip155:" + "123456789012345678901234567890123", wantErr: true},
		{in: "eip155:a.b", wantErr: true},
		{in: "eip155", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := x402.ParseNetwork(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, x402.ErrInvalidNetwork)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.in, got.String())
		})
	}
}

func TestKnownUSDC(t *testing.T) {
	want := []x402.Asset{
		{Network: "eip155:8453", Address: common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"), Name: "USD Coin", Version: "2", Decimals: 6},
		{Network: "eip155:84532", Address: common.HexToAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e"), Name: "USDC", Version: "2", Decimals: 6, Testnet: true},
	}
	require.Empty(t, cmp.Diff(want, x402.KnownUSDC()))
	for _, a := range want {
		got, ok := x402.USDC(a.Network)
		require.True(t, ok)
		require.Equal(t, a, got)
	}
	_, ok := x402.USDC("eip155:1")
	require.False(t, ok)

	all := x402.KnownUSDC()
	all[0].Name = "changed"
	again, _ := x402.USDC("eip155:8453")
	require.Equal(t, "USD Coin", again.Name, "callers cannot edit the table")
}

func TestAssetOffer(t *testing.T) {
	base, ok := x402.USDC("eip155:8453")
	require.True(t, ok)

	got, err := base.Offer("10000", testPayTo, 60)
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(x402.PaymentRequirements{
		Scheme:            "exact",
		Network:           "eip155:8453",
		Amount:            "10000", // USD 0.010000 at 6 decimals
		Asset:             "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		PayTo:             "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MaxTimeoutSeconds: 60,
		Extra:             x402.Extra{Name: "USD Coin", Version: "2"},
	}, got))

	tests := []struct {
		name    string
		amount  string
		payTo   common.Address
		timeout int
	}{
		{name: "zero amount", amount: "0", payTo: testPayTo, timeout: 60},
		{name: "decimal dollars", amount: "0.01", payTo: testPayTo, timeout: 60},
		{name: "leading zero", amount: "010000", payTo: testPayTo, timeout: 60},
		{name: "empty amount", amount: "", payTo: testPayTo, timeout: 60},
		{name: "zero payTo", amount: "10000", timeout: 60},
		{name: "window too short to settle", amount: "10000", payTo: testPayTo, timeout: 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := base.Offer(tt.amount, tt.payTo, tt.timeout)
			require.ErrorIs(t, err, x402.ErrInvalidRequirements)
		})
	}
}
