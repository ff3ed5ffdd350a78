package localfacilitator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

const (
	sepolia      = "eip155:84532"
	sepoliaUSDC  = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	someone      = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	someoneLower = "0x209693bc6afc0c5328ba36faf03c514ef312287c"
)

func TestLedgerFundAndBalance(t *testing.T) {
	l := localfacilitator.NewLedger(redistest.NewClient(t))
	ctx := context.Background()

	n, err := l.Balance(ctx, sepolia, sepoliaUSDC, someone)
	require.NoError(t, err)
	require.Zero(t, n, "an address never funded holds nothing")

	require.NoError(t, l.Fund(ctx, sepolia, sepoliaUSDC, someone, 1000))
	require.NoError(t, l.Fund(ctx, sepolia, strings.ToLower(sepoliaUSDC), someoneLower, 500))
	n, err = l.Balance(ctx, sepolia, sepoliaUSDC, someoneLower)
	require.NoError(t, err)
	require.Equal(t, uint64(1500), n, "funds add up, whatever the letter case of the addresses")

	n, err = l.Balance(ctx, "eip155:8453", sepoliaUSDC, someone)
	require.NoError(t, err)
	require.Zero(t, n, "each network keeps its own balances")

	require.ErrorIs(t, l.Fund(ctx, sepolia, sepoliaUSDC, someone, localfacilitator.MaxAmount-1499), localfacilitator.ErrBalanceLimit)
	require.ErrorIs(t, l.Fund(ctx, sepolia, sepoliaUSDC, someone, localfacilitator.MaxAmount+1), localfacilitator.ErrBalanceLimit)
	require.NoError(t, l.Fund(ctx, sepolia, sepoliaUSDC, someone, localfacilitator.MaxAmount-1500))
	n, err = l.Balance(ctx, sepolia, sepoliaUSDC, someone)
	require.NoError(t, err)
	require.Equal(t, localfacilitator.MaxAmount, n, "exactly the limit is held, exactly")
}

func TestLedgerRefusesWhatItCannotKey(t *testing.T) {
	l := localfacilitator.NewLedger(redistest.NewClient(t))
	ctx := context.Background()
	tests := []struct{ name, network, asset, address string }{
		{"not CAIP-2", "base", sepoliaUSDC, someone},
		{"not EVM", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", sepoliaUSDC, someone},
		{"asset without 0x", sepolia, sepoliaUSDC[2:], someone},
		{"address too short", sepolia, sepoliaUSDC, someone[:40]},
		{"address not hex", sepolia, sepoliaUSDC, "0x" + strings.Repeat("z", 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, l.Fund(ctx, tt.network, tt.asset, tt.address, 1), localfacilitator.ErrInvalidAccount)
			_, err := l.Balance(ctx, tt.network, tt.asset, tt.address)
			require.ErrorIs(t, err, localfacilitator.ErrInvalidAccount)
			_, err = l.TopUp(ctx, tt.network, tt.asset, tt.address, 1)
			require.ErrorIs(t, err, localfacilitator.ErrInvalidAccount)
		})
	}
}

func TestLedgerTopUpNeverInflates(t *testing.T) {
	l := localfacilitator.NewLedger(redistest.NewClient(t))
	ctx := context.Background()
	require.NoError(t, l.Fund(ctx, sepolia, sepoliaUSDC, someone, 300))

	tests := []struct {
		name      string
		target    uint64
		wantAdded uint64
		wantAfter uint64
	}{
		{"raises a lower balance to the target", 1000, 700, 1000},
		{"again: nothing to add", 1000, 0, 1000},
		{"a lower target leaves the balance alone", 10, 0, 1000},
		{"a higher target adds the difference", 2500, 1500, 2500},
	}
	for _, tt := range tests {
		added, err := l.TopUp(ctx, sepolia, sepoliaUSDC, someone, tt.target)
		require.NoError(t, err, tt.name)
		require.Equal(t, tt.wantAdded, added, tt.name)
		n, err := l.Balance(ctx, sepolia, sepoliaUSDC, someone)
		require.NoError(t, err)
		require.Equal(t, tt.wantAfter, n, tt.name)
	}
	_, err := l.TopUp(ctx, sepolia, sepoliaUSDC, someone, localfacilitator.MaxAmount+1)
	require.ErrorIs(t, err, localfacilitator.ErrBalanceLimit)
}

// TestLedgerKeysShareOneHashTag: every key of one (network, asset) lands in
// one cluster slot, so the settle script is cluster-safe.
func TestLedgerKeysShareOneHashTag(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	key := f.payer(t, 10000)
	settled, err := f.client.Settle(ctx, x402.SettleRequest(verifyRequest(f.offer, f.pay(t, key, f.offer))))
	require.NoError(t, err)
	require.True(t, settled.Success)

	keys, err := f.rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{
		"pc:facilitator:{eip155:84532:0x036cbd53842c5426634e7929541ec2318f3dcf7e}:balances",
		"pc:facilitator:{eip155:84532:0x036cbd53842c5426634e7929541ec2318f3dcf7e}:nonces",
		"pc:facilitator:{eip155:84532:0x036cbd53842c5426634e7929541ec2318f3dcf7e}:settlements",
	}, keys)
}

func TestDevAccounts(t *testing.T) {
	// The addresses Anvil and Hardhat print for the mnemonic
	// "test test test test test test test test test test test junk".
	want := []string{
		"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
		"0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		"0x90F79bf6EB2c4f870365E785982E1f101E93b906",
		"0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
		"0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
		"0x976EA74026E726554dB657fA54763abd0C3a0aa9",
		"0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
		"0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f",
		"0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
	}
	accounts := localfacilitator.DevAccounts()
	require.Len(t, accounts, len(want))
	for i, a := range accounts {
		require.Equal(t, want[i], a.Address.Hex(), "account %d", i)
		require.Equal(t, a.Address, crypto.PubkeyToAddress(a.Key.PublicKey), "account %d: the key is the address's", i)
	}
}

func TestFundDevAccountsIsIdempotent(t *testing.T) {
	l := localfacilitator.NewLedger(redistest.NewClient(t))
	ctx := context.Background()
	assets := x402.KnownUSDC()
	const target = 1_000_000_000
	rich := localfacilitator.DevAccounts()[3].Address.Hex()
	require.NoError(t, l.Fund(ctx, sepolia, sepoliaUSDC, rich, target+5))

	added, err := localfacilitator.FundDevAccounts(ctx, l, assets, target)
	require.NoError(t, err)
	require.Equal(t, uint64(len(assets)*10*target-target), added, "every account but the rich one on Sepolia")
	added, err = localfacilitator.FundDevAccounts(ctx, l, assets, target)
	require.NoError(t, err)
	require.Zero(t, added, "a restart adds nothing")

	for _, a := range assets {
		for _, acct := range localfacilitator.DevAccounts() {
			n, err := l.Balance(ctx, a.Network, a.Address.Hex(), acct.Address.Hex())
			require.NoError(t, err)
			if a.Network == sepolia && acct.Address.Hex() == rich {
				require.Equal(t, uint64(target+5), n, "a balance above the target is left alone")
				continue
			}
			require.Equal(t, uint64(target), n)
		}
	}
}
