package x402_test

import (
	"crypto/ecdsa"
	"crypto/rand"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
)

// The example payment of x402-specification-v2.md (section 5.2.1), repeated
// in specs/transports-v2/http.md and scheme_exact_evm.md.
var (
	specPayer         = common.HexToAddress("0x857b06519E91e3A54538791bDbb0E22373e36b66")
	specSignature     = "0x2d6a7588d6acca505cbf0d9a4a227e0c52c6c34008c8e8986a1283259764173608a2ce6496642e377d6da8dbbf5836e9bd15092f9ecab05ded3d6293af148b571c"
	specAuthorization = x402.Authorization{
		From:        "0x857b06519E91e3A54538791bDbb0E22373e36b66",
		To:          "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		Value:       "10000",
		ValidAfter:  "1740672089",
		ValidBefore: "1740672154",
		Nonce:       "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480",
	}
	baseSepoliaUSDC = common.HexToAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e")
)

func mustDecodeHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hexutil.Decode(s)
	require.NoError(t, err)
	return b
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	return key
}

func TestRecoverSignerSpecExample(t *testing.T) {
	sig := mustDecodeHex(t, specSignature)
	tests := []struct {
		name   string
		domain x402.Domain
		want   bool
	}{
		{
			name:   "Base Sepolia USDC domain",
			domain: x402.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: baseSepoliaUSDC},
			want:   true,
		},
		{
			name:   "mainnet name on Base Sepolia",
			domain: x402.Domain{Name: "USD Coin", Version: "2", ChainID: 84532, VerifyingContract: baseSepoliaUSDC},
		},
		{
			name:   "other version",
			domain: x402.Domain{Name: "USDC", Version: "1", ChainID: 84532, VerifyingContract: baseSepoliaUSDC},
		},
		{
			name:   "Base mainnet chain id",
			domain: x402.Domain{Name: "USDC", Version: "2", ChainID: 8453, VerifyingContract: baseSepoliaUSDC},
		},
		{
			name:   "other contract",
			domain: x402.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x402.RecoverSigner(tt.domain, specAuthorization, sig)
			require.NoError(t, err)
			if tt.want {
				require.Equal(t, specPayer, got)
			} else {
				require.NotEqual(t, specPayer, got)
			}
		})
	}
}

func TestSignAuthorizationRoundTrip(t *testing.T) {
	key := newKey(t)
	signer := crypto.PubkeyToAddress(key.PublicKey)
	domain := x402.Domain{Name: "USD Coin", Version: "2", ChainID: 8453, VerifyingContract: common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")}
	auth := specAuthorization
	auth.From = signer.Hex()

	sig, err := x402.SignAuthorization(key, domain, auth)
	require.NoError(t, err)
	require.Len(t, sig, 65)
	require.Contains(t, []byte{27, 28}, sig[64], "v must be in the 27/28 form wallets send")

	got, err := x402.RecoverSigner(domain, auth, sig)
	require.NoError(t, err)
	require.Equal(t, signer, got)

	zeroOne := append([]byte(nil), sig...)
	zeroOne[64] -= 27
	got, err = x402.RecoverSigner(domain, auth, zeroOne)
	require.NoError(t, err)
	require.Equal(t, signer, got, "v in 0/1 form must recover the same signer")

	lower := auth
	lower.From = "0x" + common.Bytes2Hex(signer.Bytes())
	got, err = x402.RecoverSigner(domain, lower, sig)
	require.NoError(t, err)
	require.Equal(t, signer, got, "address letter case must not change the digest")
}

func TestRecoverSignerRefusesMalformedSignatures(t *testing.T) {
	key := newKey(t)
	domain := x402.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: baseSepoliaUSDC}
	auth := specAuthorization
	auth.From = crypto.PubkeyToAddress(key.PublicKey).Hex()
	sig, err := x402.SignAuthorization(key, domain, auth)
	require.NoError(t, err)

	tests := []struct {
		name string
		sig  func() []byte
	}{
		{name: "empty", sig: func() []byte { return nil }},
		{name: "64 bytes", sig: func() []byte { return sig[:64] }},
		{name: "66 bytes", sig: func() []byte { return append(append([]byte(nil), sig...), 0) }},
		{name: "v is 29", sig: func() []byte { s := append([]byte(nil), sig...); s[64] = 29; return s }},
		{name: "v is 2", sig: func() []byte { s := append([]byte(nil), sig...); s[64] = 2; return s }},
		{name: "r is zero", sig: func() []byte { s := append([]byte(nil), sig...); clear(s[:32]); return s }},
		{name: "high s, the malleable twin", sig: func() []byte { return malleate(sig) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := x402.RecoverSigner(domain, auth, tt.sig())
			require.ErrorIs(t, err, x402.ErrInvalidSignature)
		})
	}
}

// malleate returns the other valid ECDSA signature of the same message:
// s' = N - s with the recovery id flipped. Ethereum contracts refuse it.
func malleate(sig []byte) []byte {
	n := crypto.S256().Params().N
	s := new(big.Int).SetBytes(sig[32:64])
	out := append([]byte(nil), sig...)
	new(big.Int).Sub(n, s).FillBytes(out[32:64])
	out[64] ^= 1 // 27 <-> 28
	return out
}

func TestAuthorizationDigestRefusesBadInput(t *testing.T) {
	good := x402.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: baseSepoliaUSDC}
	tests := []struct {
		name    string
		domain  x402.Domain
		mutate  func(*x402.Authorization)
		wantErr error
	}{
		{name: "empty domain name", domain: x402.Domain{Version: "2", ChainID: 84532, VerifyingContract: baseSepoliaUSDC}, wantErr: x402.ErrInvalidDomain},
		{name: "empty domain version", domain: x402.Domain{Name: "USDC", ChainID: 84532, VerifyingContract: baseSepoliaUSDC}, wantErr: x402.ErrInvalidDomain},
		{name: "zero chain id", domain: x402.Domain{Name: "USDC", Version: "2", VerifyingContract: baseSepoliaUSDC}, wantErr: x402.ErrInvalidDomain},
		{name: "zero contract", domain: x402.Domain{Name: "USDC", Version: "2", ChainID: 84532}, wantErr: x402.ErrInvalidDomain},
		{name: "from without 0x", domain: good, mutate: func(a *x402.Authorization) { a.From = a.From[2:] }, wantErr: x402.ErrMalformedAuthorization},
		{name: "to too short", domain: good, mutate: func(a *x402.Authorization) { a.To = a.To[:41] }, wantErr: x402.ErrMalformedAuthorization},
		{name: "negative value", domain: good, mutate: func(a *x402.Authorization) { a.Value = "-1" }, wantErr: x402.ErrMalformedAuthorization},
		{name: "value with leading zero", domain: good, mutate: func(a *x402.Authorization) { a.Value = "010000" }, wantErr: x402.ErrMalformedAuthorization},
		{name: "hex value", domain: good, mutate: func(a *x402.Authorization) { a.Value = "0x2710" }, wantErr: x402.ErrMalformedAuthorization},
		{name: "value above uint256", domain: good, mutate: func(a *x402.Authorization) {
			a.Value = "115792089237316195423570985008687907853269984665640564039457584007913129639936"
		}, wantErr: x402.ErrMalformedAuthorization},
		{name: "empty validAfter", domain: good, mutate: func(a *x402.Authorization) { a.ValidAfter = "" }, wantErr: x402.ErrMalformedAuthorization},
		{name: "fractional validBefore", domain: good, mutate: func(a *x402.Authorization) { a.ValidBefore = "1740672154.5" }, wantErr: x402.ErrMalformedAuthorization},
		{name: "31-byte nonce", domain: good, mutate: func(a *x402.Authorization) { a.Nonce = a.Nonce[:64] }, wantErr: x402.ErrMalformedAuthorization},
		{name: "nonce without 0x", domain: good, mutate: func(a *x402.Authorization) { a.Nonce = a.Nonce[2:] }, wantErr: x402.ErrMalformedAuthorization},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			auth := specAuthorization
			if tt.mutate != nil {
				tt.mutate(&auth)
			}
			_, err := x402.AuthorizationDigest(tt.domain, auth)
			require.ErrorIs(t, err, tt.wantErr)
		})
	}

	t.Run("max uint256 value is accepted", func(t *testing.T) {
		auth := specAuthorization
		auth.Value = "115792089237316195423570985008687907853269984665640564039457584007913129639935"
		_, err := x402.AuthorizationDigest(good, auth)
		require.NoError(t, err)
	})
}

func TestNewExactPayment(t *testing.T) {
	key := newKey(t)
	asset, ok := x402.USDC("eip155:84532")
	require.True(t, ok)
	payTo := common.HexToAddress("0x209693Bc6afc0C5328bA36FaF03C514EF312287C")
	req, err := asset.Offer("10000", payTo, 60)
	require.NoError(t, err)
	now := time.Unix(1_750_000_000, 0)

	p, err := x402.NewExactPayment(key, req, now, rand.Reader)
	require.NoError(t, err)
	require.Equal(t, x402.Version, p.X402Version)
	require.Equal(t, req, p.Accepted)
	a := p.Payload.Authorization
	require.Equal(t, crypto.PubkeyToAddress(key.PublicKey).Hex(), a.From)
	require.Equal(t, payTo.Hex(), a.To)
	require.Equal(t, "10000", a.Value)
	require.Equal(t, "1749999400", a.ValidAfter, "backdated ten minutes like the reference client")
	require.Equal(t, "1750000060", a.ValidBefore, "now + maxTimeoutSeconds")
	require.Len(t, a.Nonce, 66)

	payer, reason, err := x402.VerifyExact(req, p, now)
	require.NoError(t, err)
	require.Empty(t, reason)
	require.Equal(t, crypto.PubkeyToAddress(key.PublicKey), payer)

	again, err := x402.NewExactPayment(key, req, now, rand.Reader)
	require.NoError(t, err)
	require.NotEqual(t, a.Nonce, again.Payload.Authorization.Nonce, "each payment needs a fresh nonce")

	t.Run("refuses requirements it cannot sign for", func(t *testing.T) {
		bad := req
		bad.Extra.Name = ""
		_, err := x402.NewExactPayment(key, bad, now, rand.Reader)
		require.ErrorIs(t, err, x402.ErrInvalidRequirements)
	})
}

// The digest is written out for the two fixed types; go-ethereum's generic
// EIP-712 encoder (what wallets and the reference clients follow) must
// agree with it on every domain and authorization, including the extremes
// of each field.
func TestAuthorizationDigestIsGoEthereumsEIP712(t *testing.T) {
	types := apitypes.Types{
		"EIP712Domain": {
			{Name: "name", Type: "string"},
			{Name: "version", Type: "string"},
			{Name: "chainId", Type: "uint256"},
			{Name: "verifyingContract", Type: "address"},
		},
		"TransferWithAuthorization": {
			{Name: "from", Type: "address"},
			{Name: "to", Type: "address"},
			{Name: "value", Type: "uint256"},
			{Name: "validAfter", Type: "uint256"},
			{Name: "validBefore", Type: "uint256"},
			{Name: "nonce", Type: "bytes32"},
		},
	}
	maxUint256 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)).String()
	randomAddress := func() common.Address { return crypto.PubkeyToAddress(newKey(t).PublicKey) }
	randomNonce := func() string {
		var n [32]byte
		_, err := rand.Read(n[:])
		require.NoError(t, err)
		return hexutil.Encode(n[:])
	}
	cases := []struct {
		domain x402.Domain
		auth   x402.Authorization
	}{
		{x402.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: baseSepoliaUSDC}, specAuthorization},
		{x402.Domain{Name: "USD Coin", Version: "2", ChainID: 8453, VerifyingContract: randomAddress()}, x402.Authorization{
			From: randomAddress().Hex(), To: randomAddress().Hex(), Value: "0", ValidAfter: "0", ValidBefore: "1", Nonce: randomNonce(),
		}},
		{x402.Domain{Name: "Jeton é ☃", Version: "10.0-rc1", ChainID: 1<<64 - 1, VerifyingContract: randomAddress()}, x402.Authorization{
			From: randomAddress().Hex(), To: randomAddress().Hex(), Value: maxUint256, ValidAfter: maxUint256, ValidBefore: maxUint256, Nonce: randomNonce(),
		}},
	}
	for range 20 {
		cases = append(cases, struct {
			domain x402.Domain
			auth   x402.Authorization
		}{
			x402.Domain{Name: randomNonce(), Version: "1", ChainID: uint64(len(cases)) * 977, VerifyingContract: randomAddress()},
			x402.Authorization{From: randomAddress().Hex(), To: randomAddress().Hex(), Value: "10000", ValidAfter: "1740672089", ValidBefore: "1740672154", Nonce: randomNonce()},
		})
	}
	for _, c := range cases {
		got, err := x402.AuthorizationDigest(c.domain, c.auth)
		require.NoError(t, err)

		value, _ := new(big.Int).SetString(c.auth.Value, 10)
		after, _ := new(big.Int).SetString(c.auth.ValidAfter, 10)
		before, _ := new(big.Int).SetString(c.auth.ValidBefore, 10)
		want, _, err := apitypes.TypedDataAndHash(apitypes.TypedData{
			Types:       types,
			PrimaryType: "TransferWithAuthorization",
			Domain: apitypes.TypedDataDomain{
				Name: c.domain.Name, Version: c.domain.Version,
				ChainId:           (*math.HexOrDecimal256)(new(big.Int).SetUint64(c.domain.ChainID)),
				VerifyingContract: c.domain.VerifyingContract.Hex(),
			},
			Message: apitypes.TypedDataMessage{
				"from": c.auth.From, "to": c.auth.To, "value": value, "validAfter": after, "validBefore": before,
				"nonce": mustDecodeHex(t, c.auth.Nonce),
			},
		})
		require.NoError(t, err)
		require.Equal(t, [32]byte(want), got, "domain %+v, authorization %+v", c.domain, c.auth)
	}
}

func BenchmarkAuthorizationDigest(b *testing.B) {
	domain := x402.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: baseSepoliaUSDC}
	for b.Loop() {
		if _, err := x402.AuthorizationDigest(domain, specAuthorization); err != nil {
			b.Fatal(err)
		}
	}
}
