package x402_test

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
)

// FuzzDecodeHeader feeds arbitrary header values to the decoder for each
// wire type a peer can send us. It must never panic, must refuse only with
// a *HeaderError, and whatever it accepts must survive a re-encode. Each
// input is tried twice: as the header value itself, which exercises the
// base64 layer, and as the JSON inside a well-formed header, which random
// mutation of base64 text would rarely reach.
func FuzzDecodeHeader(f *testing.F) {
	for _, seed := range []string{
		specPaymentRequiredHeader,
		specPaymentSignatureHeader,
		specPaymentResponseSuccess,
		specPaymentResponseFailure,
		"",
		"e30=",
		"e31=",
		"bnVsbA==",
		base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"extra":{"name":"USDC"}},"extensions":{"a":{"info":{}}}}`)),
		base64.StdEncoding.EncodeToString([]byte(`{"kinds":[{"x402Version":2,"extra":{"feePayer":"x"}}],"signers":{"eip155:*":["0x"]}}`)),
		`{"x402Version":2,"accepted":{"scheme":"exact","extra":{"name":"USDC","version":"2"}},"payload":{"signature":"0x","authorization":{"nonce":"0x"}}}`,
		`{"success":false,"errorReason":"insufficient_funds","transaction":"","network":"eip155:84532"} `,
		`{"x402Version":2,"resource":{"url":"u"},"accepts":[{"maxTimeoutSeconds":1e3}],"extensions":{"k":[1,{"a":null}]}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		for _, header := range []string{input, base64.StdEncoding.EncodeToString([]byte(input))} {
			checkDecode(t, header, func() any { return new(x402.PaymentPayload) })
			checkDecode(t, header, func() any { return new(x402.PaymentRequired) })
			checkDecode(t, header, func() any { return new(x402.SettleResponse) })
			checkDecode(t, header, func() any { return new(x402.SupportedResponse) })
		}
	})
}

func checkDecode(t *testing.T, header string, newValue func() any) {
	t.Helper()
	v := newValue()
	err := x402.DecodeHeader(header, v)
	if err != nil {
		var headerErr *x402.HeaderError
		require.True(t, errors.As(err, &headerErr), "refusal is not a *HeaderError: %v", err)
		return
	}
	once, err := x402.EncodeHeader(v)
	if errors.Is(err, x402.ErrHeaderTooLarge) {
		return // escaping can grow a value that was just under the limit
	}
	require.NoError(t, err)
	w := newValue()
	require.NoError(t, x402.DecodeHeader(once, w), "re-encoded value must decode")
	twice, err := x402.EncodeHeader(w)
	require.NoError(t, err)
	require.Equal(t, once, twice, "encoding must be a fixed point after one round")
}
