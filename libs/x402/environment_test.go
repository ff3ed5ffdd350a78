package x402_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
)

func TestCheckNetworks(t *testing.T) {
	for _, tc := range []struct {
		env      string
		networks []string
		ok       bool
	}{
		{"sandbox", []string{"eip155:84532"}, true},
		{"live", []string{"eip155:8453"}, true},
		{"live", []string{"eip155:8453", "eip155:84532"}, false},
		{"live", []string{"eip155:84532"}, false},
		{"sandbox", []string{"eip155:8453"}, false},
		{"sandbox", []string{"eip155:1"}, false},
		{"sandbox", nil, false},
		{"staging", []string{"eip155:84532"}, false},
	} {
		err := x402.CheckNetworks(tc.env, tc.networks)
		if tc.ok {
			require.NoError(t, err, "%s %v", tc.env, tc.networks)
		} else {
			require.Error(t, err, "%s %v", tc.env, tc.networks)
		}
	}
	for _, env := range []string{"sandbox", "live"} {
		require.NoError(t, x402.CheckNetworks(env, x402.DefaultNetworks(env)), "the default of %s is valid", env)
	}
	require.False(t, x402.NetworkAllowed("live", "eip155:84532"), "no live fee is paid with test tokens")
}

func TestParsePublicBase(t *testing.T) {
	b, err := x402.ParsePublicBase("https://api.example.com/")
	require.NoError(t, err)
	require.Equal(t, "https://api.example.com/api/fees/f1/x402", b.URL("/api/fees/f1/x402"))
	b, err = x402.ParsePublicBase("http://127.0.0.1:8080/pc")
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8080/pc/x", b.URL("/x"))
	for _, bad := range []string{"", "api.example.com", "/relative", "ftp://x", "https://user@x", "https://x/?q=1", "https://x/#f", "https://"} {
		_, err := x402.ParsePublicBase(bad)
		require.Error(t, err, bad)
	}
}

func TestPaymentSignature(t *testing.T) {
	valid, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: x402.Version})
	require.NoError(t, err)
	v1, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: 1})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		values  []string
		present bool
		bad     bool
	}{
		{"none", nil, false, false},
		{"one", []string{valid}, true, false},
		{"two identical", []string{valid, valid}, true, true},
		{"not base64", []string{"%%%"}, true, true},
		{"version 1", []string{v1}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.values {
				h.Add(x402.HeaderPaymentSignature, v)
			}
			_, present, err := x402.PaymentSignature(h)
			require.Equal(t, tc.present, present)
			if tc.bad {
				var he *x402.HeaderError
				require.ErrorAs(t, err, &he)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

func TestAuthorizationIDIgnoresCase(t *testing.T) {
	offer := x402.PaymentRequirements{Network: "eip155:84532", Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e"}
	p := x402.PaymentPayload{Payload: x402.ExactEVMPayload{Authorization: x402.Authorization{From: "0xAbC0000000000000000000000000000000000001", Nonce: "0xAB"}}}
	q := p
	q.Payload.Authorization.From = "0xabc0000000000000000000000000000000000001"
	q.Payload.Authorization.Nonce = "0xab"
	require.Equal(t, x402.AuthorizationID(offer, p), x402.AuthorizationID(offer, q))
	q.Payload.Authorization.Nonce = "0xac"
	require.NotEqual(t, x402.AuthorizationID(offer, p), x402.AuthorizationID(offer, q))
}
