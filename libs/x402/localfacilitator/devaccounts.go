package localfacilitator

import (
	"context"
	"crypto/ecdsa"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/pcourt/pcourt/libs/x402"
)

// devKeys are the private keys of the ten development accounts that Anvil
// and Hardhat create from the mnemonic "test test test test test test test
// test test test test junk" (derivation path m/44'/60'/0'/0/i). They are
// PUBLIC TEST KEYS, printed by every Anvil start and in countless
// tutorials: anyone can sign with them, so they must never hold anything of
// value. They are here so that dev and test wallets can pay the local
// facilitator with keys every EVM tool already knows.
var devKeys = [10]string{
	"ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
	"59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
	"5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
	"7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
	"47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
	"8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
	"92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
	"4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
	"dbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
	"2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
}

// DevAccount is one of the public Anvil/Hardhat development accounts.
type DevAccount struct {
	Address common.Address
	// Key is the account's private key. It is public knowledge; see
	// DevAccounts.
	Key *ecdsa.PrivateKey
}

// DevAccounts returns the ten public Anvil/Hardhat development accounts,
// the first being 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266. Their keys
// are published test keys: use them only against the local facilitator.
func DevAccounts() []DevAccount {
	out := make([]DevAccount, len(devKeys))
	for i, hex := range devKeys {
		key, err := crypto.HexToECDSA(hex)
		if err != nil {
			// The table is constant and covered by a test.
			panic(fmt.Sprintf("facilitator: development key %d: %v", i, err))
		}
		out[i] = DevAccount{Address: crypto.PubkeyToAddress(key.PublicKey), Key: key}
	}
	return out
}

// FundDevAccounts tops up every development account to target on every
// asset, with Ledger.TopUp: running it again, as every restart of the dev
// facilitator does, leaves balances at or above target untouched. It
// returns the total it added.
func FundDevAccounts(ctx context.Context, l *Ledger, assets []x402.Asset, target uint64) (uint64, error) {
	var added uint64
	for _, a := range assets {
		for _, acct := range DevAccounts() {
			n, err := l.TopUp(ctx, a.Network, a.Address.Hex(), acct.Address.Hex(), target)
			if err != nil {
				return added, fmt.Errorf("funding development accounts: %w", err)
			}
			added += n
		}
	}
	return added, nil
}
