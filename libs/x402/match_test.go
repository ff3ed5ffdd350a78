package x402_test

import (
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
)

func TestMatchOffer(t *testing.T) {
	base, ok := x402.USDC("eip155:8453")
	require.True(t, ok)
	sepolia, ok := x402.USDC("eip155:84532")
	require.True(t, ok)
	onBase, err := base.Offer("10000", testPayTo, 60)
	require.NoError(t, err)
	onSepolia, err := sepolia.Offer("10000", testPayTo, 60)
	require.NoError(t, err)
	offers := []x402.PaymentRequirements{onBase, onSepolia}

	tests := []struct {
		name     string
		accepted func(x402.PaymentRequirements) x402.PaymentRequirements
		want     x402.PaymentRequirements
		wantErr  error
	}{
		{name: "exact copy", accepted: func(r x402.PaymentRequirements) x402.PaymentRequirements { return r }, want: onSepolia},
		{
			name: "addresses in lower case",
			accepted: func(r x402.PaymentRequirements) x402.PaymentRequirements {
				r.Asset, r.PayTo = strings.ToLower(r.Asset), strings.ToLower(r.PayTo)
				return r
			},
			want: onSepolia,
		},
		{
			name: "our copy wins over the client's extra and timeout",
			accepted: func(r x402.PaymentRequirements) x402.PaymentRequirements {
				r.Extra = x402.Extra{Name: "USD Coin", Version: "9"}
				r.MaxTimeoutSeconds = 86400
				return r
			},
			want: onSepolia,
		},
		{name: "other scheme", accepted: func(r x402.PaymentRequirements) x402.PaymentRequirements { r.Scheme = "upto"; return r }, wantErr: x402.ErrNoMatchingOffer},
		{name: "other network", accepted: func(r x402.PaymentRequirements) x402.PaymentRequirements { r.Network = "eip155:1"; return r }, wantErr: x402.ErrNoMatchingOffer},
		{name: "amount one unit less", accepted: func(r x402.PaymentRequirements) x402.PaymentRequirements { r.Amount = "9999"; return r }, wantErr: x402.ErrNoMatchingOffer},
		{name: "amount with leading zero", accepted: func(r x402.PaymentRequirements) x402.PaymentRequirements { r.Amount = "010000"; return r }, wantErr: x402.ErrNoMatchingOffer},
		{
			name:     "other asset",
			accepted: func(r x402.PaymentRequirements) x402.PaymentRequirements { r.Asset = onBase.Asset; return r },
			wantErr:  x402.ErrNoMatchingOffer,
		},
		{
			name: "other payTo",
			accepted: func(r x402.PaymentRequirements) x402.PaymentRequirements {
				r.PayTo = common.HexToAddress("0x857b06519E91e3A54538791bDbb0E22373e36b66").Hex()
				return r
			},
			wantErr: x402.ErrNoMatchingOffer,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x402.MatchOffer(offers, tt.accepted(onSepolia))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Empty(t, cmp.Diff(tt.want, got))
		})
	}

	t.Run("no offers", func(t *testing.T) {
		_, err := x402.MatchOffer(nil, onBase)
		require.ErrorIs(t, err, x402.ErrNoMatchingOffer)
	})
}
