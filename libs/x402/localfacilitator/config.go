package localfacilitator

import (
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/x402"
)

// Config configures the local facilitator's HTTP API.
type Config struct {
	// Assets are the tokens it settles, one per network: the networks it
	// lists in /supported and accepts in /verify and /settle.
	Assets []x402.Asset
	// Token, when set, is the bearer token every caller must send
	// (Authorization: Bearer <token>), as production facilitators demand an
	// authorization header. Empty: no authentication.
	Token envconf.Secret
	// MaxBodyBytes bounds a /verify or /settle body.
	MaxBodyBytes int64
	// Now is the clock the payment window is checked against.
	Now func() time.Time
}

// DefaultConfig returns the defaults: USDC on every network package x402
// knows (Base and Base Sepolia), no token, the wall clock.
func DefaultConfig() Config {
	return Config{
		Assets:       x402.KnownUSDC(),
		MaxBodyBytes: 64 << 10,
		Now:          time.Now,
	}
}

// Validate reports the first unusable setting.
func (c Config) Validate() error {
	if len(c.Assets) == 0 {
		return errors.New("facilitator: at least one asset required")
	}
	seen := map[string]bool{}
	for _, a := range c.Assets {
		if _, err := x402.EVMChainID(a.Network); err != nil {
			return fmt.Errorf("facilitator: asset network: %w", err)
		}
		if seen[a.Network] {
			return fmt.Errorf("facilitator: two assets on %s; the exact scheme here settles one token per network", a.Network)
		}
		seen[a.Network] = true
		if a.Address == (common.Address{}) || a.Name == "" || a.Version == "" {
			return fmt.Errorf("facilitator: asset on %s needs an address and its EIP-712 name and version", a.Network)
		}
	}
	switch {
	case c.MaxBodyBytes <= 0:
		return errors.New("facilitator: max body bytes must be positive")
	case c.Now == nil:
		return errors.New("facilitator: clock required")
	}
	return nil
}
