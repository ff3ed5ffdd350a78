package x402_test

import (
	"crypto/ecdsa"
	"crypto/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
)

var testPayTo = common.HexToAddress("0x209693Bc6afc0C5328bA36FaF03C514EF312287C")

// resign signs p's (possibly edited) authorization again under the domain
// of req, so that a test isolates the one rule it breaks.
func resign(t testing.TB, key *ecdsa.PrivateKey, req x402.PaymentRequirements, p *x402.PaymentPayload) {
	t.Helper()
	domain, err := x402.DomainFor(req)
	require.NoError(t, err)
	sig, err := x402.SignAuthorization(key, domain, p.Payload.Authorization)
	require.NoError(t, err)
	p.Payload.Signature = hexutil.Encode(sig)
}

func TestVerifyExactSpecExample(t *testing.T) {
	var p x402.PaymentPayload
	require.NoError(t, x402.DecodeHeader(specPaymentSignatureHeader, &p))
	req := p.Accepted // the server's offer, as the specification shows it
	inWindow := time.Unix(1740672100, 0)

	payer, reason, err := x402.VerifyExact(req, p, inWindow)
	require.NoError(t, err)
	require.Empty(t, reason)
	require.Equal(t, specPayer, payer)

	wrongName := req
	wrongName.Extra.Name = "USD Coin"
	_, reason, err = x402.VerifyExact(wrongName, p, inWindow)
	require.ErrorIs(t, err, x402.ErrPaymentRefused)
	require.Equal(t, x402.ReasonInvalidSignature, reason)
}

func TestVerifyExact(t *testing.T) {
	key := newKey(t)
	payer := crypto.PubkeyToAddress(key.PublicKey)
	other := newKey(t)
	asset, ok := x402.USDC("eip155:84532")
	require.True(t, ok)
	offer, err := asset.Offer("10000", testPayTo, 60)
	require.NoError(t, err)
	now := time.Unix(1_750_000_000, 0)
	unix := now.Unix()
	at := func(d int64) string { return strconv.FormatInt(unix+d, 10) }

	tests := []struct {
		name string
		// edit changes the requirements or the authorization before the
		// payload is signed again, so the signature stays good.
		edit func(req *x402.PaymentRequirements, p *x402.PaymentPayload)
		// tamper changes them after signing.
		tamper     func(req *x402.PaymentRequirements, p *x402.PaymentPayload)
		wantReason string
		wantPayer  common.Address
	}{
		{name: "valid", wantPayer: payer},
		{
			name:      "validBefore exactly now+6s",
			edit:      func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Authorization.ValidBefore = at(6) },
			wantPayer: payer,
		},
		{
			name:      "validAfter exactly now",
			edit:      func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Authorization.ValidAfter = at(0) },
			wantPayer: payer,
		},
		{
			name: "payTo in other letter case",
			edit: func(req *x402.PaymentRequirements, p *x402.PaymentPayload) {
				req.PayTo = strings.ToLower(req.PayTo)
				p.Payload.Authorization.To = strings.ToLower(p.Payload.Authorization.To)
			},
			wantPayer: payer,
		},
		{
			name: "signature with v as 0/1",
			tamper: func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) {
				sig := mustDecodeHex(t, p.Payload.Signature)
				sig[64] -= 27
				p.Payload.Signature = hexutil.Encode(sig)
			},
			wantPayer: payer,
		},
		{
			name:       "x402 version 1",
			edit:       func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.X402Version = 1 },
			wantReason: x402.ReasonInvalidX402Version,
		},
		{
			name: "requirements in a scheme we do not implement",
			edit: func(req *x402.PaymentRequirements, p *x402.PaymentPayload) {
				req.Scheme = "upto"
				p.Accepted.Scheme = "upto"
			},
			wantReason: x402.ReasonUnsupportedScheme,
		},
		{
			name:       "payload in another scheme",
			edit:       func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Accepted.Scheme = "upto" },
			wantReason: x402.ReasonInvalidScheme,
		},
		{
			name:       "payload on another network",
			edit:       func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Accepted.Network = "eip155:8453" },
			wantReason: x402.ReasonInvalidNetwork,
		},
		{
			name: "requirements on a non-EVM network",
			tamper: func(req *x402.PaymentRequirements, p *x402.PaymentPayload) {
				req.Network = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
				p.Accepted.Network = req.Network
			},
			wantReason: x402.ReasonInvalidNetwork,
		},
		{
			name:       "authorization pays someone else",
			edit:       func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Authorization.To = payer.Hex() },
			wantReason: x402.ReasonRecipientMismatch,
			wantPayer:  payer,
		},
		{
			name: "client accepted another payTo",
			edit: func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) {
				p.Accepted.PayTo = payer.Hex()
				p.Payload.Authorization.To = payer.Hex()
			},
			wantReason: x402.ReasonRecipientMismatch,
			wantPayer:  payer,
		},
		{
			name:       "amount one unit over",
			edit:       func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Authorization.Value = "10001" },
			wantReason: x402.ReasonValueMismatch,
			wantPayer:  payer,
		},
		{
			name:       "amount one unit under",
			edit:       func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Authorization.Value = "9999" },
			wantReason: x402.ReasonValueMismatch,
			wantPayer:  payer,
		},
		{
			name: "expired",
			edit: func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) {
				p.Payload.Authorization.ValidBefore = at(-1)
			},
			wantReason: x402.ReasonValidBefore,
			wantPayer:  payer,
		},
		{
			name:       "expires in under 6 seconds",
			edit:       func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Authorization.ValidBefore = at(5) },
			wantReason: x402.ReasonValidBefore,
			wantPayer:  payer,
		},
		{
			name:       "not valid yet",
			edit:       func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Authorization.ValidAfter = at(1) },
			wantReason: x402.ReasonValidAfter,
			wantPayer:  payer,
		},
		{
			name: "tampered signature",
			tamper: func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) {
				sig := []byte(p.Payload.Signature)
				if sig[10] == '1' {
					sig[10] = '2'
				} else {
					sig[10] = '1'
				}
				p.Payload.Signature = string(sig)
			},
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  payer,
		},
		{
			name: "nonce changed after signing",
			tamper: func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) {
				p.Payload.Authorization.Nonce = "0x" + strings.Repeat("ab", 32)
			},
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  payer,
		},
		{
			name: "signed by another key",
			tamper: func(req *x402.PaymentRequirements, p *x402.PaymentPayload) {
				resign(t, other, *req, p)
			},
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  payer,
		},
		{
			name: "signed under another domain name",
			tamper: func(req *x402.PaymentRequirements, p *x402.PaymentPayload) {
				mainnetName := *req
				mainnetName.Extra.Name = "USD Coin"
				resign(t, key, mainnetName, p)
			},
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  payer,
		},
		{
			name: "high-s signature",
			tamper: func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) {
				p.Payload.Signature = hexutil.Encode(malleate(mustDecodeHex(t, p.Payload.Signature)))
			},
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  payer,
		},
		{
			name:       "signature not hex",
			tamper:     func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Signature = "not a signature" },
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  payer,
		},
		{
			name:       "empty signature",
			tamper:     func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Signature = "" },
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  payer,
		},
		{
			name:       "from is not an address",
			tamper:     func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) { p.Payload.Authorization.From = "0x1234" },
			wantReason: x402.ReasonInvalidPayload,
		},
		{
			name: "value is not a number",
			tamper: func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) {
				p.Payload.Authorization.Value = "ten thousand"
			},
			wantReason: x402.ReasonInvalidPayload,
		},
		{
			name:       "requirements without EIP-712 domain name",
			tamper:     func(req *x402.PaymentRequirements, _ *x402.PaymentPayload) { req.Extra.Name = "" },
			wantReason: x402.ReasonInvalidPaymentRequirements,
		},
		{
			name:       "requirements with the permit2 transfer method",
			tamper:     func(req *x402.PaymentRequirements, _ *x402.PaymentPayload) { req.Extra.AssetTransferMethod = "permit2" },
			wantReason: x402.ReasonInvalidPaymentRequirements,
		},
		{
			name: "payload accepted another asset",
			edit: func(_ *x402.PaymentRequirements, p *x402.PaymentPayload) {
				p.Accepted.Asset = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
			},
			wantReason: x402.ReasonInvalidPaymentRequirements,
			wantPayer:  payer,
		},
	}
	// A Verifier gives VerifyExact's answer whether or not it remembers the
	// signer: it is shared by every case, so valid signatures of earlier
	// cases are remembered while later ones tamper with theirs, and it is
	// small, so its memory turns over during the table.
	verifier := x402.NewVerifier(2)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := offer
			p, err := x402.NewExactPayment(key, req, now, rand.Reader)
			require.NoError(t, err)
			if tt.edit != nil {
				tt.edit(&req, &p)
				resign(t, key, req, &p)
			}
			if tt.tamper != nil {
				tt.tamper(&req, &p)
			}

			check := func(verify func(x402.PaymentRequirements, x402.PaymentPayload, time.Time) (common.Address, string, error)) {
				t.Helper()
				gotPayer, reason, err := verify(req, p, now)
				require.Equal(t, tt.wantReason, reason)
				require.Equal(t, tt.wantPayer, gotPayer)
				if tt.wantReason == "" {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, x402.ErrPaymentRefused)
				require.ErrorContains(t, err, tt.wantReason)
			}
			check(x402.VerifyExact)
			check(verifier.VerifyExact) // as /verify: recovered, or remembered from an earlier case
			check(verifier.VerifyExact) // as /settle: remembered when it recovered
		})
	}
}

// TestVerifierRemembersSignaturesNotAuthorizations: once an authorization
// has been verified, the same authorization with another signature (a
// forger's, over the very same digest) is still recovered and refused; the
// remembered signer answers only for the signature it was recovered from.
func TestVerifierRemembersSignaturesNotAuthorizations(t *testing.T) {
	key, forger := newKey(t), newKey(t)
	asset, ok := x402.USDC("eip155:84532")
	require.True(t, ok)
	offer, err := asset.Offer("10000", testPayTo, 60)
	require.NoError(t, err)
	now := time.Unix(1_750_000_000, 0)
	p, err := x402.NewExactPayment(key, offer, now, rand.Reader)
	require.NoError(t, err)

	verifier := x402.NewVerifier(16)
	payer, reason, err := verifier.VerifyExact(offer, p, now)
	require.NoError(t, err)
	require.Empty(t, reason)
	require.Equal(t, crypto.PubkeyToAddress(key.PublicKey), payer)

	forged := p
	resign(t, forger, offer, &forged)
	require.NotEqual(t, p.Payload.Signature, forged.Payload.Signature)
	_, reason, err = verifier.VerifyExact(offer, forged, now)
	require.ErrorIs(t, err, x402.ErrPaymentRefused)
	require.Equal(t, x402.ReasonInvalidSignature, reason)

	_, reason, err = verifier.VerifyExact(offer, p, now) // the payer's own, remembered
	require.NoError(t, err)
	require.Empty(t, reason)
}
