package x402_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestDecodeHeaderSpecExamples(t *testing.T) {
	specRequirements := x402.PaymentRequirements{
		Scheme:            "exact",
		Network:           "eip155:84532",
		Amount:            "10000",
		Asset:             "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		PayTo:             "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MaxTimeoutSeconds: 60,
		Extra:             x402.Extra{Name: "USDC", Version: "2"},
	}
	specResource := x402.ResourceInfo{
		URL:         "https://api.example.com/premium-data",
		Description: "Access to premium market data",
		MimeType:    "application/json",
	}

	t.Run("PAYMENT-REQUIRED", func(t *testing.T) {
		var got x402.PaymentRequired
		require.NoError(t, x402.DecodeHeader(specPaymentRequiredHeader, &got))
		want := x402.PaymentRequired{
			X402Version: 2,
			Error:       "PAYMENT-SIGNATURE header is required",
			Resource:    specResource,
			Accepts:     []x402.PaymentRequirements{specRequirements},
		}
		require.Empty(t, cmp.Diff(want, got))
	})

	t.Run("PAYMENT-SIGNATURE", func(t *testing.T) {
		var got x402.PaymentPayload
		require.NoError(t, x402.DecodeHeader(specPaymentSignatureHeader, &got))
		want := x402.PaymentPayload{
			X402Version: 2,
			Resource:    &specResource,
			Accepted:    specRequirements,
			Payload:     x402.ExactEVMPayload{Signature: specSignature, Authorization: specAuthorization},
		}
		require.Empty(t, cmp.Diff(want, got))

		// Field order and encoding match a standard client byte for byte,
		// so what we sign and send is what a reference peer would.
		again, err := x402.EncodeHeader(got)
		require.NoError(t, err)
		require.Equal(t, specPaymentSignatureHeader, again)
	})

	t.Run("PAYMENT-RESPONSE", func(t *testing.T) {
		var success x402.SettleResponse
		require.NoError(t, x402.DecodeHeader(specPaymentResponseSuccess, &success))
		require.Empty(t, cmp.Diff(x402.SettleResponse{
			Success:     true,
			Transaction: "0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef",
			Network:     "eip155:84532",
			Payer:       "0x857b06519E91e3A54538791bDbb0E22373e36b66",
		}, success))

		var failure x402.SettleResponse
		require.NoError(t, x402.DecodeHeader(specPaymentResponseFailure, &failure))
		require.Empty(t, cmp.Diff(x402.SettleResponse{
			ErrorReason: x402.ReasonInsufficientFunds,
			Network:     "eip155:84532",
			Payer:       "0x857b06519E91e3A54538791bDbb0E22373e36b66",
		}, failure))
	})
}

func TestEncodeHeaderRoundTrip(t *testing.T) {
	asset, ok := x402.USDC("eip155:8453")
	require.True(t, ok)
	offer, err := asset.Offer("10000", testPayTo, 60)
	require.NoError(t, err)
	challenge := x402.PaymentRequired{
		X402Version: x402.Version,
		Resource:    x402.ResourceInfo{URL: "https://example.test/api/x402/dispute-readiness", MimeType: "application/json"},
		Accepts:     []x402.PaymentRequirements{offer},
		Extensions:  x402.Extensions{"bazaar": json.RawMessage(`{"info":{"input":{"type":"http","method":"POST"}},"schema":{"type":"object"}}`)},
	}

	s, err := x402.EncodeHeader(challenge)
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "\n", "compact JSON")

	var got x402.PaymentRequired
	require.NoError(t, x402.DecodeHeader(s, &got))
	require.Empty(t, cmp.Diff(challenge, got))
}

func TestEncodeHeaderRequiredCollectionsAreNeverNull(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{
			name: "challenge without extensions or offers",
			v:    x402.PaymentRequired{X402Version: 2, Resource: x402.ResourceInfo{URL: "https://example.test/r"}},
			want: `{"x402Version":2,"resource":{"url":"https://example.test/r"},"accepts":[],"extensions":{}}`,
		},
		{
			name: "payload without optional parts",
			v:    x402.PaymentPayload{X402Version: 2},
			want: `{"x402Version":2,"accepted":{"scheme":"","network":"","amount":"","asset":"","payTo":"","maxTimeoutSeconds":0,"extra":{"name":"","version":""}},"payload":{"signature":"","authorization":{"from":"","to":"","value":"","validAfter":"","validBefore":"","nonce":""}}}`,
		},
		{
			name: "failed settlement keeps the empty transaction",
			v:    x402.SettleResponse{ErrorReason: x402.ReasonInvalidTransactionState, Network: "eip155:8453"},
			want: `{"success":false,"errorReason":"invalid_transaction_state","transaction":"","network":"eip155:8453"}`,
		},
		{
			name: "empty supported",
			v:    x402.SupportedResponse{},
			want: `{"kinds":[],"extensions":[],"signers":{}}`,
		},
		{
			name: "verify valid",
			v:    x402.VerifyResponse{IsValid: true, Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66"},
			want: `{"isValid":true,"payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := x402.EncodeHeader(tt.v)
			require.NoError(t, err)
			require.Equal(t, b64(tt.want), s)
		})
	}
}

func TestEncodeHeaderRefusesOversizedValues(t *testing.T) {
	_, err := x402.EncodeHeader(x402.PaymentRequired{Error: strings.Repeat("x", x402.MaxHeaderLen)})
	require.ErrorIs(t, err, x402.ErrHeaderTooLarge)
}

func TestDecodeHeaderRefusesMalformedValues(t *testing.T) {
	valid := `{"success":true,"transaction":"0xab","network":"eip155:8453"}`
	tests := []struct {
		name    string
		header  string
		wantErr error
	}{
		{name: "empty", header: "", wantErr: x402.ErrHeaderNotJSON},
		{name: "not base64", header: "!!!!", wantErr: x402.ErrHeaderNotBase64},
		{name: "URL-safe alphabet", header: strings.NewReplacer("+", "-", "/", "_").Replace(b64(`{"network":"??>>??>>"}`)), wantErr: x402.ErrHeaderNotBase64},
		{name: "missing padding", header: strings.TrimRight(b64(valid+" "), "="), wantErr: x402.ErrHeaderNotBase64},
		{name: "truncated", header: b64(valid)[:10], wantErr: x402.ErrHeaderNotBase64},
		{name: "line break inside", header: b64(valid)[:8] + "\r\n" + b64(valid)[8:], wantErr: x402.ErrHeaderNotBase64},
		{name: "surrounding space", header: " " + b64(valid), wantErr: x402.ErrHeaderNotBase64},
		{name: "non-canonical padding bits", header: "e31=", wantErr: x402.ErrHeaderNotBase64}, // "{}" is "e30="
		{name: "not JSON", header: b64("hello"), wantErr: x402.ErrHeaderNotJSON},
		{name: "JSON null", header: b64("null"), wantErr: x402.ErrHeaderNotJSON},
		{name: "JSON array", header: b64("[" + valid + "]"), wantErr: x402.ErrHeaderNotJSON},
		{name: "unterminated object", header: b64(valid[:len(valid)-1]), wantErr: x402.ErrHeaderNotJSON},
		{name: "unknown field", header: b64(`{"success":true,"transaction":"","network":"eip155:8453","txHash":"0x"}`), wantErr: x402.ErrHeaderNotJSON},
		{name: "wrong type", header: b64(`{"success":"yes","transaction":"","network":"eip155:8453"}`), wantErr: x402.ErrHeaderNotJSON},
		{name: "two objects", header: b64(valid + valid), wantErr: x402.ErrHeaderNotJSON},
		{name: "trailing garbage", header: b64(valid + " x"), wantErr: x402.ErrHeaderNotJSON},
		{name: "oversized", header: strings.Repeat("A", x402.MaxHeaderLen+4), wantErr: x402.ErrHeaderTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got x402.SettleResponse
			err := x402.DecodeHeader(tt.header, &got)
			var headerErr *x402.HeaderError
			require.ErrorAs(t, err, &headerErr, "every refusal of peer input must map to 400 invalid_payload")
			require.ErrorIs(t, err, tt.wantErr)
		})
	}

	t.Run("trailing whitespace inside the JSON is fine", func(t *testing.T) {
		var got x402.SettleResponse
		require.NoError(t, x402.DecodeHeader(b64(valid+"\n"), &got))
		require.True(t, got.Success)
	})

	t.Run("unknown field nested in a payment payload", func(t *testing.T) {
		var p x402.PaymentPayload
		require.NoError(t, x402.DecodeHeader(specPaymentSignatureHeader, &p))
		raw, err := base64.StdEncoding.DecodeString(specPaymentSignatureHeader)
		require.NoError(t, err)
		tampered := strings.Replace(string(raw), `"version":"2"`, `"version":"2","decimals":6`, 1)
		require.NotEqual(t, string(raw), tampered)
		err = x402.DecodeHeader(b64(tampered), &p)
		require.ErrorIs(t, err, x402.ErrHeaderNotJSON)
	})

	t.Run("a bad target is our bug, not the peer's", func(t *testing.T) {
		err := x402.DecodeHeader(b64(valid), nil)
		require.Error(t, err)
		var headerErr *x402.HeaderError
		require.False(t, errors.As(err, &headerErr))
	})
}
