package localfacilitator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/x402"
)

// MaxAmount is the largest balance and the largest transfer the ledger
// holds, in atomic units: 2^53-1, about nine billion USDC. Redis does the
// arithmetic on 64-bit integers, but its Lua scripts compare numbers as
// doubles, which are exact only up to 2^53; keeping every balance at or
// below this bound keeps every comparison exact. A payment for more than
// MaxAmount can never be covered, and is refused as insufficient_funds.
const MaxAmount uint64 = 1<<53 - 1

// KeyPrefix starts every key of the ledger.
const KeyPrefix = "pc:facilitator:"

var (
	// ErrInvalidAccount reports a network, asset or address the ledger
	// cannot key: not an EVM CAIP-2 network, not a 0x-hex address.
	ErrInvalidAccount = errors.New("invalid ledger account")
	// ErrBalanceLimit reports a credit that would take a balance above
	// MaxAmount.
	ErrBalanceLimit = errors.New("balance would exceed the ledger limit")
)

// Settlement is one transfer the ledger has settled.
type Settlement struct {
	// Transaction is the settlement's id, reported as the transaction hash:
	// "0x" and 64 hex digits, derived from the signed authorization.
	Transaction string
	Network     string
	Asset       common.Address
	From        common.Address
	To          common.Address
	Amount      uint64
	// Nonce is the EIP-3009 nonce, 0x and 64 lower-case hex digits.
	Nonce     string
	SettledAt time.Time
}

// Ledger keeps token balances, used EIP-3009 nonces and settlements in
// Redis. All keys of one (network, asset) pair share a hash tag, so every
// script runs unchanged on Redis Cluster:
//
//	pc:facilitator:{<network>:<asset>}:balances     hash  address → balance
//	pc:facilitator:{<network>:<asset>}:nonces       hash  from:nonce → transaction
//	pc:facilitator:{<network>:<asset>}:settlements  hash  transaction → record (JSON)
//
// Addresses and nonces are lower-case 0x-hex; balances are decimal integers
// of atomic units, never above MaxAmount. Nothing expires: a used nonce
// stays used, as on chain.
type Ledger struct {
	rdb redis.UniversalClient
}

// NewLedger returns a ledger over rdb.
func NewLedger(rdb redis.UniversalClient) *Ledger {
	return &Ledger{rdb: rdb}
}

// account is one token on one network: the unit every script works in.
type account struct {
	network string
	asset   common.Address
}

func parseAccount(network, asset string) (account, error) {
	if _, err := x402.EVMChainID(network); err != nil {
		return account{}, fmt.Errorf("%w: %w", ErrInvalidAccount, err)
	}
	a, err := parseAddress(asset)
	if err != nil {
		return account{}, fmt.Errorf("asset: %w", err)
	}
	return account{network: network, asset: a}, nil
}

func (a account) key(suffix string) string {
	return KeyPrefix + "{" + a.network + ":" + lowerHex(a.asset) + "}:" + suffix
}

func (a account) keys() []string {
	return []string{a.key("balances"), a.key("nonces"), a.key("settlements")}
}

// parseAddress accepts 0x and 40 hex digits in any letter case.
func parseAddress(s string) (common.Address, error) {
	if len(s) != 42 || !strings.HasPrefix(s, "0x") || !common.IsHexAddress(s) {
		return common.Address{}, fmt.Errorf("%q is not a 0x-hex address: %w", s, ErrInvalidAccount)
	}
	return common.HexToAddress(s), nil
}

func lowerHex(a common.Address) string { return strings.ToLower(a.Hex()) }

// fundScript adds ARGV[2] to the balance of ARGV[1], unless that would take
// it above ARGV[3]; it answers the new balance, or -1.
var fundScript = redis.NewScript(`
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if cur + tonumber(ARGV[2]) > tonumber(ARGV[3]) then
  return -1
end
return redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
`)

// topUpScript raises the balance of ARGV[1] to ARGV[2] if it is lower, and
// answers how much it added.
var topUpScript = redis.NewScript(`
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local target = tonumber(ARGV[2])
if cur >= target then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return target - cur
`)

// Fund adds amount to the balance of address, as a faucet would. It refuses
// with ErrBalanceLimit, changing nothing, when the balance would exceed
// MaxAmount.
func (l *Ledger) Fund(ctx context.Context, network, asset, address string, amount uint64) error {
	acct, err := parseAccount(network, asset)
	if err != nil {
		return fmt.Errorf("funding: %w", err)
	}
	addr, err := parseAddress(address)
	if err != nil {
		return fmt.Errorf("funding: %w", err)
	}
	if amount > MaxAmount {
		return fmt.Errorf("funding %s with %d: %w", address, amount, ErrBalanceLimit)
	}
	n, err := fundScript.Run(ctx, l.rdb, []string{acct.key("balances")},
		lowerHex(addr), strconv.FormatUint(amount, 10), strconv.FormatUint(MaxAmount, 10)).Int64()
	if err != nil {
		return fmt.Errorf("funding %s on %s: %w", address, network, err)
	}
	if n < 0 {
		return fmt.Errorf("funding %s with %d: %w", address, amount, ErrBalanceLimit)
	}
	return nil
}

// TopUp raises the balance of address to target if it is lower and leaves
// it alone otherwise, so that repeating it (a restart of the dev
// facilitator) never inflates a balance. It returns what it added.
func (l *Ledger) TopUp(ctx context.Context, network, asset, address string, target uint64) (uint64, error) {
	acct, err := parseAccount(network, asset)
	if err != nil {
		return 0, fmt.Errorf("topping up: %w", err)
	}
	addr, err := parseAddress(address)
	if err != nil {
		return 0, fmt.Errorf("topping up: %w", err)
	}
	if target > MaxAmount {
		return 0, fmt.Errorf("topping up %s to %d: %w", address, target, ErrBalanceLimit)
	}
	n, err := topUpScript.Run(ctx, l.rdb, []string{acct.key("balances")},
		lowerHex(addr), strconv.FormatUint(target, 10)).Int64()
	if err != nil {
		return 0, fmt.Errorf("topping up %s on %s: %w", address, network, err)
	}
	return uint64(n), nil
}

// Balance returns the balance of address; an address never funded has 0.
func (l *Ledger) Balance(ctx context.Context, network, asset, address string) (uint64, error) {
	acct, err := parseAccount(network, asset)
	if err != nil {
		return 0, fmt.Errorf("reading balance: %w", err)
	}
	addr, err := parseAddress(address)
	if err != nil {
		return 0, fmt.Errorf("reading balance: %w", err)
	}
	return l.balance(ctx, acct, addr)
}

func (l *Ledger) balance(ctx context.Context, acct account, addr common.Address) (uint64, error) {
	s, err := l.rdb.HGet(ctx, acct.key("balances"), lowerHex(addr)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading balance of %s on %s: %w", addr.Hex(), acct.network, err)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading balance of %s on %s: stored %q: %w", addr.Hex(), acct.network, s, err)
	}
	return n, nil
}

// Settlements returns every settlement of asset on network, oldest first.
func (l *Ledger) Settlements(ctx context.Context, network, asset string) ([]Settlement, error) {
	acct, err := parseAccount(network, asset)
	if err != nil {
		return nil, fmt.Errorf("listing settlements: %w", err)
	}
	all, err := l.rdb.HGetAll(ctx, acct.key("settlements")).Result()
	if err != nil {
		return nil, fmt.Errorf("listing settlements on %s: %w", network, err)
	}
	out := make([]Settlement, 0, len(all))
	for tx, raw := range all {
		s, err := decodeRecord(raw)
		if err != nil {
			return nil, fmt.Errorf("listing settlements on %s: %s: %w", network, tx, err)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].SettledAt.Equal(out[j].SettledAt) {
			return out[i].SettledAt.Before(out[j].SettledAt)
		}
		return out[i].Transaction < out[j].Transaction
	})
	return out, nil
}

// settlement returns the settlement recorded under transaction tx.
func (l *Ledger) settlement(ctx context.Context, acct account, tx string) (Settlement, bool, error) {
	raw, err := l.rdb.HGet(ctx, acct.key("settlements"), tx).Result()
	if errors.Is(err, redis.Nil) {
		return Settlement{}, false, nil
	}
	if err != nil {
		return Settlement{}, false, fmt.Errorf("reading settlement %s: %w", tx, err)
	}
	s, err := decodeRecord(raw)
	if err != nil {
		return Settlement{}, false, fmt.Errorf("reading settlement %s: %w", tx, err)
	}
	return s, true, nil
}

// nonceState is what verification needs from the ledger: which transaction,
// if any, used the nonce, and what the payer holds.
type nonceState struct {
	usedBy  string
	balance uint64
}

func (l *Ledger) state(ctx context.Context, acct account, from common.Address, nonce string) (nonceState, error) {
	pipe := l.rdb.Pipeline()
	used := pipe.HGet(ctx, acct.key("nonces"), nonceField(from, nonce))
	bal := pipe.HGet(ctx, acct.key("balances"), lowerHex(from))
	_, _ = pipe.Exec(ctx) // each command's error is read below
	var st nonceState
	v, err := used.Result()
	switch {
	case err == nil:
		st.usedBy = v
	case !errors.Is(err, redis.Nil):
		return nonceState{}, fmt.Errorf("reading nonce of %s: %w", from.Hex(), err)
	}
	v, err = bal.Result()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		return nonceState{}, fmt.Errorf("reading balance of %s: %w", from.Hex(), err)
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nonceState{}, fmt.Errorf("reading balance of %s: stored %q: %w", from.Hex(), v, err)
		}
		st.balance = n
	}
	return st, nil
}

func nonceField(from common.Address, nonce string) string {
	return lowerHex(from) + ":" + nonce
}

// settleOutcome is how the settle script ended.
type settleOutcome int

const (
	// settledNow: this call moved the funds.
	settledNow settleOutcome = iota
	// settledBefore: the same authorization had been settled; nothing moved.
	settledBefore
	// nonceUsed: another authorization used the nonce; nothing moved.
	nonceUsed
	// insufficient: the payer's balance does not cover the value.
	insufficient
	// recipientFull: the credit would take the recipient above MaxAmount.
	recipientFull
)

// settleScript is the one atomic step of a settlement. It looks the nonce
// up first, so that a repeated settlement of the same authorization answers
// the stored record and never moves funds twice; then checks the balance;
// then moves the value, marks the nonce used and stores the record. Every
// number is at most MaxAmount, so tonumber and the sums below are exact;
// HINCRBY does the arithmetic on integers.
//
// KEYS: balances, nonces, settlements.
// ARGV: nonce field, transaction, from, to, value, record, MaxAmount.
var settleScript = redis.NewScript(`
local prev = redis.call('HGET', KEYS[2], ARGV[1])
if prev then
  if prev == ARGV[2] then
    return {'settled_before', redis.call('HGET', KEYS[3], prev)}
  end
  return {'nonce_used', prev}
end
local value = tonumber(ARGV[5])
local from = tonumber(redis.call('HGET', KEYS[1], ARGV[3]) or '0')
if from < value then
  return {'insufficient', tostring(from)}
end
if ARGV[3] ~= ARGV[4] then
  local to = tonumber(redis.call('HGET', KEYS[1], ARGV[4]) or '0')
  if to + value > tonumber(ARGV[7]) then
    return {'recipient_full'}
  end
end
redis.call('HINCRBY', KEYS[1], ARGV[3], '-' .. ARGV[5])
redis.call('HINCRBY', KEYS[1], ARGV[4], ARGV[5])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[6])
return {'settled_now', ARGV[6]}
`)

// settle applies s to the ledger in one step and returns the settlement
// that stands for its authorization (s itself, or the one stored before).
func (l *Ledger) settle(ctx context.Context, acct account, s Settlement) (settleOutcome, Settlement, error) {
	if s.Amount > MaxAmount {
		return 0, Settlement{}, fmt.Errorf("settling %s: amount %d: %w", s.Transaction, s.Amount, ErrBalanceLimit)
	}
	rec, err := encodeRecord(s)
	if err != nil {
		return 0, Settlement{}, fmt.Errorf("settling %s: %w", s.Transaction, err)
	}
	res, err := settleScript.Run(ctx, l.rdb, acct.keys(),
		nonceField(s.From, s.Nonce), s.Transaction, lowerHex(s.From), lowerHex(s.To),
		strconv.FormatUint(s.Amount, 10), rec, strconv.FormatUint(MaxAmount, 10)).StringSlice()
	if err != nil {
		return 0, Settlement{}, fmt.Errorf("settling %s: %w", s.Transaction, err)
	}
	if len(res) == 0 {
		return 0, Settlement{}, fmt.Errorf("settling %s: empty script answer", s.Transaction)
	}
	switch res[0] {
	case "settled_now", "settled_before":
		if len(res) < 2 {
			return 0, Settlement{}, fmt.Errorf("settling %s: script answered %q without a record", s.Transaction, res[0])
		}
		stored, err := decodeRecord(res[1])
		if err != nil {
			return 0, Settlement{}, fmt.Errorf("settling %s: %w", s.Transaction, err)
		}
		if res[0] == "settled_now" {
			return settledNow, stored, nil
		}
		return settledBefore, stored, nil
	case "nonce_used":
		return nonceUsed, Settlement{}, nil
	case "insufficient":
		return insufficient, Settlement{}, nil
	case "recipient_full":
		return recipientFull, Settlement{}, nil
	}
	return 0, Settlement{}, fmt.Errorf("settling %s: unknown script answer %q", s.Transaction, res[0])
}

// settlementRecord is a Settlement as stored in Redis.
type settlementRecord struct {
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Asset       string `json:"asset"`
	From        string `json:"from"`
	To          string `json:"to"`
	Amount      string `json:"amount"`
	Nonce       string `json:"nonce"`
	// SettledAtMs is Unix milliseconds.
	SettledAtMs int64 `json:"settledAtMs"`
}

func encodeRecord(s Settlement) (string, error) {
	b, err := json.Marshal(settlementRecord{
		Transaction: s.Transaction,
		Network:     s.Network,
		Asset:       lowerHex(s.Asset),
		From:        lowerHex(s.From),
		To:          lowerHex(s.To),
		Amount:      strconv.FormatUint(s.Amount, 10),
		Nonce:       s.Nonce,
		SettledAtMs: s.SettledAt.UnixMilli(),
	})
	if err != nil {
		return "", fmt.Errorf("encoding settlement record: %w", err)
	}
	return string(b), nil
}

func decodeRecord(raw string) (Settlement, error) {
	var r settlementRecord
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return Settlement{}, fmt.Errorf("decoding settlement record: %w", err)
	}
	amount, err := strconv.ParseUint(r.Amount, 10, 64)
	if err != nil {
		return Settlement{}, fmt.Errorf("decoding settlement record: amount %q: %w", r.Amount, err)
	}
	return Settlement{
		Transaction: r.Transaction,
		Network:     r.Network,
		Asset:       common.HexToAddress(r.Asset),
		From:        common.HexToAddress(r.From),
		To:          common.HexToAddress(r.To),
		Amount:      amount,
		Nonce:       r.Nonce,
		SettledAt:   time.UnixMilli(r.SettledAtMs).UTC(),
	}, nil
}
