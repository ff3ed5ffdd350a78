package localfacilitator

import (
	"context"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
)

// TestSettleScript drives the Lua step directly. Through HTTP, a repeated
// settlement is usually answered from its record before the script runs;
// only concurrent requests reach the script's own replay branch, so it is
// pinned down here.
func TestSettleScript(t *testing.T) {
	l := NewLedger(redistest.NewClient(t))
	ctx := context.Background()
	acct := account{network: "eip155:84532", asset: common.HexToAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e")}
	from := common.HexToAddress("0x857b06519E91e3A54538791bDbb0E22373e36b66")
	to := common.HexToAddress("0x209693Bc6afc0C5328bA36FaF03C514EF312287C")
	require.NoError(t, l.Fund(ctx, acct.network, acct.asset.Hex(), from.Hex(), 25000))

	transfer := func(tx, nonce string, amount uint64) Settlement {
		return Settlement{
			Transaction: tx, Network: acct.network, Asset: acct.asset, From: from, To: to, Amount: amount,
			Nonce: nonce, SettledAt: time.UnixMilli(1_750_000_000_123).UTC(),
		}
	}
	first := transfer("0x01", "0xaa", 10000)

	tests := []struct {
		name        string
		s           Settlement
		want        settleOutcome
		wantStored  *Settlement
		wantBalance [2]uint64 // from, to after the step
	}{
		{"first settlement moves the value", first, settledNow, &first, [2]uint64{15000, 10000}},
		{"same authorization again answers the record", first, settledBefore, &first, [2]uint64{15000, 10000}},
		{"another authorization with the used nonce", transfer("0x02", "0xaa", 10000), nonceUsed, nil, [2]uint64{15000, 10000}},
		{"more than the balance", transfer("0x03", "0xbb", 15001), insufficient, nil, [2]uint64{15000, 10000}},
		{"exactly the balance", transfer("0x04", "0xcc", 15000), settledNow, nil, [2]uint64{0, 25000}},
	}
	for _, tt := range tests {
		outcome, stored, err := l.settle(ctx, acct, tt.s)
		require.NoError(t, err, tt.name)
		require.Equal(t, tt.want, outcome, tt.name)
		if tt.wantStored != nil {
			require.Empty(t, cmp.Diff(*tt.wantStored, stored), tt.name)
		}
		fromBal, err := l.balance(ctx, acct, from)
		require.NoError(t, err)
		toBal, err := l.balance(ctx, acct, to)
		require.NoError(t, err)
		require.Equal(t, tt.wantBalance, [2]uint64{fromBal, toBal}, tt.name)
	}
	all, err := l.Settlements(ctx, acct.network, acct.asset.Hex())
	require.NoError(t, err)
	require.Len(t, all, 2)
}
