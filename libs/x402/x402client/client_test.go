package x402client_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/x402client"
)

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	return key
}

// newClient returns a client on the endpoint's clock, with cfg's other
// fields as given.
func newClient(t testing.TB, cfg x402client.Config) *x402client.Client {
	t.Helper()
	if cfg.Key == nil {
		cfg.Key = newKey(t)
	}
	cfg.Now = func() time.Time { return testNow }
	c, err := x402client.New(cfg)
	require.NoError(t, err)
	return c
}

func newRequest(t testing.TB, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, nil)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test", "kept")
	return req
}

const testBody = `{"question":"ready?"}`

func TestPayPaysAndReturnsTheSettlement(t *testing.T) {
	offer := usdcOffer(t, "eip155:84532", "10000")
	e := &paidEndpoint{offers: []x402.PaymentRequirements{offer}}
	base := e.start(t)
	key := newKey(t)
	c := newClient(t, x402client.Config{Key: key})

	res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, base+"/paid"), []byte(testBody))
	require.NoError(t, err)

	require.Equal(t, http.StatusOK, res.Response.StatusCode)
	require.True(t, res.Paid)
	payer := crypto.PubkeyToAddress(key.PublicKey)
	require.Equal(t, payer, c.Payer())

	requests, signatures, payers, _ := e.stats()
	require.Equal(t, 2, requests, "the unpaid request and the paid one")
	require.Len(t, signatures, 1)
	require.Equal(t, []common.Address{payer}, payers, "the endpoint recovered the client's address from the signature")

	// The payment is the reference client's shape: version 2, the offer
	// verbatim, the challenge's resource, the signed authorization.
	require.Equal(t, x402.Version, res.Payment.X402Version)
	require.Empty(t, cmp.Diff(offer, res.Payment.Accepted))
	require.NotNil(t, res.Payment.Resource)
	require.Empty(t, cmp.Diff(res.Challenge.Resource, *res.Payment.Resource))
	require.Equal(t, base+"/paid", res.Payment.Resource.URL)
	require.Equal(t, payer.Hex(), res.Payment.Payload.Authorization.From)
	require.Nil(t, res.Payment.Extensions)
	require.Empty(t, res.PaymentIdentifier)
	var sent x402.PaymentPayload
	require.NoError(t, x402.DecodeHeader(signatures[0], &sent))
	require.Empty(t, cmp.Diff(res.Payment, sent), "Result.Payment is what was sent")

	require.NotNil(t, res.Settlement)
	require.True(t, res.Settlement.Success)
	require.Equal(t, payer.Hex(), res.Settlement.Payer)
	require.Equal(t, "eip155:84532", res.Settlement.Network)
	require.NotEmpty(t, res.Settlement.Transaction)

	var answer struct {
		Echo    json.RawMessage `json:"echo"`
		Payment struct {
			Replayed bool `json:"replayed"`
		} `json:"payment"`
	}
	require.NoError(t, json.Unmarshal(res.Body, &answer))
	require.JSONEq(t, testBody, string(answer.Echo), "the body was resent with the payment")
	require.False(t, answer.Payment.Replayed)
	readable, err := io.ReadAll(res.Response.Body)
	require.NoError(t, err)
	require.Equal(t, res.Body, readable)
}

func TestPayChoosesByNetworkPreference(t *testing.T) {
	base := usdcOffer(t, "eip155:8453", "10000")
	sepolia := usdcOffer(t, "eip155:84532", "10000")
	for _, tc := range []struct {
		name     string
		networks []string
		offers   []x402.PaymentRequirements
		want     string
	}{
		{"testnet first by default", nil, []x402.PaymentRequirements{base, sepolia}, "eip155:84532"},
		{"mainnet when it is the only offer", nil, []x402.PaymentRequirements{base}, "eip155:8453"},
		{"configured order wins over the server's", []string{"eip155:8453", "eip155:84532"}, []x402.PaymentRequirements{sepolia, base}, "eip155:8453"},
		{"only the configured network", []string{"eip155:84532"}, []x402.PaymentRequirements{base, sepolia}, "eip155:84532"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &paidEndpoint{offers: tc.offers}
			url := e.start(t)
			c := newClient(t, x402client.Config{Networks: tc.networks})

			res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, res.Response.StatusCode)
			require.Equal(t, tc.want, res.Payment.Accepted.Network)
			require.Equal(t, tc.want, res.Settlement.Network)
		})
	}
}

func TestPayRefusesOffers(t *testing.T) {
	otherToken := x402.Asset{Network: "eip155:84532", Address: common.HexToAddress("0x1111111111111111111111111111111111111111"), Name: "Fake", Version: "1", Decimals: 6}
	mainnetEth := x402.Asset{Network: "eip155:1", Address: common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"), Name: "USD Coin", Version: "2", Decimals: 6}
	offerOf := func(a x402.Asset, amount string) x402.PaymentRequirements {
		o, err := a.Offer(amount, testPayTo, 60)
		require.NoError(t, err)
		return o
	}
	upto := usdcOffer(t, "eip155:84532", "10000")
	upto.Scheme = "upto"
	permit2 := usdcOffer(t, "eip155:84532", "10000")
	permit2.Extra.AssetTransferMethod = "permit2"

	for _, tc := range []struct {
		name   string
		cfg    x402client.Config
		offers []x402.PaymentRequirements
		want   error
	}{
		{"above the default 10 USDC", x402client.Config{}, []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000001")}, x402client.ErrAmountTooHigh},
		{"above a configured maximum", x402client.Config{MaxAmount: "9999"}, []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, x402client.ErrAmountTooHigh},
		{"network not preferred", x402client.Config{Networks: []string{"eip155:8453"}}, []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, x402client.ErrNoAcceptableOffer},
		{"network without known USDC", x402client.Config{}, []x402.PaymentRequirements{offerOf(mainnetEth, "10000")}, x402client.ErrNoAcceptableOffer},
		{"another token", x402client.Config{}, []x402.PaymentRequirements{offerOf(otherToken, "10000")}, x402client.ErrNoAcceptableOffer},
		{"another scheme", x402client.Config{}, []x402.PaymentRequirements{upto}, x402client.ErrNoAcceptableOffer},
		{"another transfer method", x402client.Config{}, []x402.PaymentRequirements{permit2}, x402client.ErrNoAcceptableOffer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &paidEndpoint{offers: tc.offers}
			url := e.start(t)
			c := newClient(t, tc.cfg)

			res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
			require.ErrorIs(t, err, tc.want)
			require.NotNil(t, res, "the 402 answer comes with the refusal")
			require.False(t, res.Paid)
			require.Equal(t, http.StatusPaymentRequired, res.Response.StatusCode)
			require.NotNil(t, res.Challenge)
			require.NotEmpty(t, res.Body)

			requests, signatures, _, _ := e.stats()
			require.Equal(t, 1, requests, "nothing is sent after the 402")
			require.Empty(t, signatures)
		})
	}
}

func TestPayPassesUnpaidAnswersThrough(t *testing.T) {
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}}
	url := e.start(t)
	c := newClient(t, x402client.Config{})

	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/free", http.StatusOK},
		{"/missing", http.StatusNotFound},
	} {
		res, err := c.Pay(context.Background(), newRequest(t, http.MethodGet, url+tc.path), nil)
		require.NoError(t, err)
		require.Equal(t, tc.status, res.Response.StatusCode)
		require.False(t, res.Paid)
		require.Nil(t, res.Challenge)
		require.Nil(t, res.Settlement)
	}
	_, signatures, _, _ := e.stats()
	require.Empty(t, signatures)
}

func TestPayDoesNotFollowASecond402(t *testing.T) {
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, refusePayments: true}
	url := e.start(t)
	c := newClient(t, x402client.Config{})

	res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
	require.ErrorIs(t, err, x402client.ErrPaymentRejected)
	var rejected *x402client.RejectedError
	require.ErrorAs(t, err, &rejected)
	require.Equal(t, x402.ReasonInsufficientFunds, rejected.Reason)
	require.NotNil(t, rejected.Challenge)
	require.Equal(t, "payment refused", rejected.Challenge.Error)
	require.NotNil(t, rejected.Settlement)
	require.False(t, rejected.Settlement.Success)

	require.True(t, res.Paid)
	require.Equal(t, http.StatusPaymentRequired, res.Response.StatusCode)
	require.Equal(t, rejected.Settlement, res.Settlement)
	requests, signatures, _, _ := e.stats()
	require.Equal(t, 2, requests)
	require.Len(t, signatures, 1, "one signature per Pay call")
}

func TestPayRefusesMalformedChallenges(t *testing.T) {
	offer := usdcOffer(t, "eip155:84532", "10000")
	encode := func(doc string) string { return base64.StdEncoding.EncodeToString([]byte(doc)) }
	valid, err := json.Marshal(x402.PaymentRequired{X402Version: 2, Resource: x402.ResourceInfo{URL: "http://x/paid"}, Accepts: []x402.PaymentRequirements{offer}})
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		fault func(e *paidEndpoint)
	}{
		{"header not base64", func(e *paidEndpoint) { e.challengeHeader = "not base64!" }},
		{"header base64 without padding", func(e *paidEndpoint) { e.challengeHeader = encode(string(valid))[:len(encode(string(valid)))-1] }},
		{"header with an unknown field", func(e *paidEndpoint) {
			e.challengeHeader = encode(`{"x402Version":2,"resource":{"url":"u"},"accepts":[],"surprise":1}`)
		}},
		{"header of version 1", func(e *paidEndpoint) {
			e.challengeHeader = encode(`{"x402Version":1,"resource":{"url":"u"},"accepts":[]}`)
		}},
		{"header without offers", func(e *paidEndpoint) {
			e.challengeHeader = encode(`{"x402Version":2,"resource":{"url":"u"},"accepts":[]}`)
		}},
		{"header malformed, body valid", func(e *paidEndpoint) { e.challengeHeader, e.challengeBody = "%%%", string(valid) }},
		{"no header, body not JSON", func(e *paidEndpoint) { e.challengeInBodyOnly, e.challengeBody = true, "payment required" }},
		{"no header, body a problem", func(e *paidEndpoint) {
			e.challengeInBodyOnly, e.challengeBody = true, `{"type":"about:blank","status":402}`
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &paidEndpoint{offers: []x402.PaymentRequirements{offer}}
			tc.fault(e)
			url := e.start(t)
			c := newClient(t, x402client.Config{})

			res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
			require.ErrorIs(t, err, x402client.ErrMalformedChallenge)
			require.False(t, res.Paid)
			require.Equal(t, http.StatusPaymentRequired, res.Response.StatusCode)
			_, signatures, _, _ := e.stats()
			require.Empty(t, signatures)
		})
	}
}

func TestPayReadsTheChallengeFromTheBodyWithoutHeader(t *testing.T) {
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, challengeInBodyOnly: true}
	url := e.start(t)
	c := newClient(t, x402client.Config{})

	res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
	require.NoError(t, err)
	require.True(t, res.Paid)
	require.Equal(t, http.StatusOK, res.Response.StatusCode)
}

func TestPayRefusesMalformedSettlement(t *testing.T) {
	for _, tc := range []struct{ name, header string }{
		{"not base64", "%%%"},
		{"unknown field", base64.StdEncoding.EncodeToString([]byte(`{"success":true,"transaction":"0x1","network":"eip155:84532","bonus":1}`))},
		{"not an object", base64.StdEncoding.EncodeToString([]byte(`[]`))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, responseHeader: tc.header}
			url := e.start(t)
			c := newClient(t, x402client.Config{})

			res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
			require.ErrorIs(t, err, x402client.ErrMalformedSettlement)
			var headerErr *x402.HeaderError
			require.ErrorAs(t, err, &headerErr)
			require.True(t, res.Paid)
			require.Nil(t, res.Settlement)
			require.Equal(t, http.StatusOK, res.Response.StatusCode)
		})
	}
}

func TestRetryResendsTheSamePayment(t *testing.T) {
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}}
	url := e.start(t)
	c := newClient(t, x402client.Config{})
	ctx := context.Background()

	paid, err := c.Pay(ctx, newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
	require.NoError(t, err)
	again, err := c.Retry(ctx, newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody), paid.Payment)
	require.NoError(t, err)

	_, signatures, _, _ := e.stats()
	require.Len(t, signatures, 2)
	require.Equal(t, signatures[0], signatures[1], "Retry sends the identical PAYMENT-SIGNATURE value")
	require.True(t, again.Paid)
	require.Equal(t, http.StatusOK, again.Response.StatusCode)
	require.Equal(t, paid.Settlement, again.Settlement, "the stored settlement is replayed")
	require.Contains(t, string(again.Body), `"replayed":true`)

	// Another body is another request: the payment does not buy it.
	other, err := c.Retry(ctx, newRequest(t, http.MethodPost, url+"/paid"), []byte(`{"question":"other"}`), paid.Payment)
	require.NoError(t, err)
	require.Equal(t, http.StatusConflict, other.Response.StatusCode)
}

func TestRetryAfterALostAnswer(t *testing.T) {
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, dropFirstAnswer: true}
	url := e.start(t)
	// Every request on a connection of its own: an answer lost on a new
	// connection is the caller's to recover (a kept-alive one is resent by
	// net/http, below).
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c := newClient(t, x402client.Config{HTTP: fresh})
	ctx := context.Background()

	lost, err := c.Pay(ctx, newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
	require.Error(t, err)
	require.NotNil(t, lost)
	require.True(t, lost.Paid, "the payment was sent")
	require.Nil(t, lost.Response)

	res, err := c.Retry(ctx, newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody), lost.Payment)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.Response.StatusCode)
	require.Contains(t, string(res.Body), `"replayed":true`)
	_, signatures, payers, _ := e.stats()
	require.Len(t, signatures, 2)
	require.Equal(t, signatures[0], signatures[1])
	require.Len(t, payers, 2)
}

func TestPaidRequestIsResentWhenAKeptAliveConnectionClosesUnanswered(t *testing.T) {
	// The paid request goes out on the connection the challenge came back
	// on, and the server closes it without an answer (as an ingress that
	// reloads closes its idle connections, or here after settling):
	// net/http sends the same payment again on a new connection, as it
	// would a GET, and the stored answer comes back.
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, dropFirstAnswer: true}
	url := e.start(t)
	c := newClient(t, x402client.Config{})

	res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.Response.StatusCode)
	require.Contains(t, string(res.Body), `"replayed":true`)
	requests, signatures, _, _ := e.stats()
	require.Equal(t, 3, requests, "the challenge, the paid request and its resend")
	require.Len(t, signatures, 2)
	require.Equal(t, signatures[0], signatures[1], "the resend is the same payment")
	require.Empty(t, e.idempotencyKeys(), "the mark that lets net/http resend is not sent")
}

// The price answer cut short on the way (an ingress reloading under load
// closes a connection mid-answer): Pay asks again, once, on a new
// connection, and pays once.
func TestPayAsksThePriceAgainWhenItsAnswerIsCutShort(t *testing.T) {
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, cutFirstChallenge: true}
	url := e.start(t)
	c := newClient(t, x402client.Config{})

	res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.Response.StatusCode)
	requests, signatures, _, _ := e.stats()
	require.Equal(t, 3, requests, "the cut challenge, the challenge again, the paid request")
	require.Len(t, signatures, 1, "one payment")
}

// A gateway's 502, 503 or 504 to the price query is asked again, once; a
// second one is the answer.
func TestPayAsksThePriceAgainAfterAGatewayError(t *testing.T) {
	for _, status := range []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, gatewayFirst: status}
		url := e.start(t)
		res, err := newClient(t, x402client.Config{}).Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
		require.NoError(t, err, status)
		require.Equal(t, http.StatusOK, res.Response.StatusCode)
		requests, signatures, _, _ := e.stats()
		require.Equal(t, 3, requests, "%d, the challenge, the paid request", status)
		require.Len(t, signatures, 1)
	}
	// Any other answer is the server's, and is returned as it is.
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, gatewayFirst: http.StatusInternalServerError}
	url := e.start(t)
	res, err := newClient(t, x402client.Config{}).Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, res.Response.StatusCode)
	requests, _, _, _ := e.stats()
	require.Equal(t, 1, requests)
}

// A cut answer to the paid request is not resent by Pay: the caller gets
// ErrAnswerCut with the payment, and Retry sends the very same payment,
// which the server answers from its stored answer.
func TestACutPaidAnswerIsTheCallersToRetry(t *testing.T) {
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, cutFirstPaidAnswer: true}
	url := e.start(t)
	c := newClient(t, x402client.Config{})
	req := newRequest(t, http.MethodPost, url+"/paid")
	res, err := c.Pay(context.Background(), req, []byte(testBody))
	require.ErrorIs(t, err, x402client.ErrAnswerCut)
	require.True(t, res.Paid)
	_, signatures, _, _ := e.stats()
	require.Len(t, signatures, 1, "Pay sent the paid request once")

	again, err := c.Retry(context.Background(), req, []byte(testBody), res.Payment)
	require.NoError(t, err)
	require.Contains(t, string(again.Body), `"replayed":true`)
	_, signatures, _, _ = e.stats()
	require.Equal(t, []string{signatures[0], signatures[0]}, signatures, "the retry is the same payment")
}

// paymentIdentifierDeclaration is the server's advertisement, verbatim from
// specs/extensions/payment_identifier.md (PaymentRequired section), with
// required set as given.
func paymentIdentifierDeclaration(required bool) json.RawMessage {
	r := "false"
	if required {
		r = "true"
	}
	return json.RawMessage(`{
      "info": {"required": ` + r + `},
      "schema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
          "required": { "type": "boolean" },
          "id": { "type": "string", "minLength": 16, "maxLength": 128 }
        },
        "required": ["required"]
      }
    }`)
}

var paymentIDPattern = regexp.MustCompile(`^pay_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$`)

func TestPaymentIdentifierExtension(t *testing.T) {
	bazaar := json.RawMessage(`{"info":{"input":{"type":"http","method":"POST"}},"schema":{"type":"object"}}`)
	e := &paidEndpoint{
		offers:     []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")},
		extensions: x402.Extensions{"payment-identifier": paymentIdentifierDeclaration(true), "bazaar": bazaar},
	}
	url := e.start(t)
	c := newClient(t, x402client.Config{})
	ctx := context.Background()

	first, err := c.Pay(ctx, newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
	require.NoError(t, err)
	require.Regexp(t, paymentIDPattern, first.PaymentIdentifier)

	// The payload echoes the declaration with the id added to its info,
	// and every other extension untouched.
	var ext struct {
		Info   map[string]any  `json:"info"`
		Schema json.RawMessage `json:"schema"`
	}
	require.NoError(t, json.Unmarshal(first.Payment.Extensions["payment-identifier"], &ext))
	require.Equal(t, map[string]any{"required": true, "id": first.PaymentIdentifier}, ext.Info)
	var declared struct {
		Schema json.RawMessage `json:"schema"`
	}
	require.NoError(t, json.Unmarshal(paymentIdentifierDeclaration(true), &declared))
	require.JSONEq(t, string(declared.Schema), string(ext.Schema))
	require.JSONEq(t, string(bazaar), string(first.Payment.Extensions["bazaar"]))

	second, err := c.Pay(ctx, newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
	require.NoError(t, err)
	require.Regexp(t, paymentIDPattern, second.PaymentIdentifier)
	require.NotEqual(t, first.PaymentIdentifier, second.PaymentIdentifier, "a fresh id per Pay call")

	retried, err := c.Retry(ctx, newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody), first.Payment)
	require.NoError(t, err)
	require.Equal(t, first.PaymentIdentifier, retried.PaymentIdentifier, "a retry keeps its id")

	_, _, _, ids := e.stats()
	require.Equal(t, []string{first.PaymentIdentifier, second.PaymentIdentifier, first.PaymentIdentifier}, ids, "the server read the ids")
}

func TestPaymentIdentifierOnlyWhenAdvertisedWellFormed(t *testing.T) {
	for _, tc := range []struct {
		name string
		exts x402.Extensions
	}{
		{"not advertised", nil},
		{"required is not a boolean", x402.Extensions{"payment-identifier": json.RawMessage(`{"info":{"required":null},"schema":{}}`)}},
		{"no info", x402.Extensions{"payment-identifier": json.RawMessage(`{"schema":{}}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}, extensions: tc.exts}
			url := e.start(t)
			c := newClient(t, x402client.Config{})

			res, err := c.Pay(context.Background(), newRequest(t, http.MethodPost, url+"/paid"), []byte(testBody))
			require.NoError(t, err)
			require.Empty(t, res.PaymentIdentifier)
			for k, v := range tc.exts {
				require.JSONEq(t, string(v), string(res.Payment.Extensions[k]), "echoed untouched")
			}
			require.Len(t, res.Payment.Extensions, len(tc.exts))
		})
	}
}

func TestPayKeepsTheRequest(t *testing.T) {
	var seen []http.Header
	var bodies [][]byte
	e := &paidEndpoint{offers: []x402.PaymentRequirements{usdcOffer(t, "eip155:84532", "10000")}}
	url := e.start(t)
	c := newClient(t, x402client.Config{HTTP: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		seen = append(seen, r.Header.Clone())
		bodies = append(bodies, b)
		r.Body = io.NopCloser(bytes.NewReader(b))
		return http.DefaultTransport.RoundTrip(r)
	})}})
	req := newRequest(t, http.MethodPut, url+"/paid")

	res, err := c.Pay(context.Background(), req, []byte(testBody))
	require.NoError(t, err)
	require.True(t, res.Paid)
	require.Len(t, seen, 2)
	for i := range seen {
		require.Equal(t, "kept", seen[i].Get("X-Test"))
		require.Equal(t, testBody, string(bodies[i]), "byte-identical body on both requests")
	}
	require.Empty(t, seen[0].Get(x402.HeaderPaymentSignature))
	require.NotEmpty(t, seen[1].Get(x402.HeaderPaymentSignature))
	require.Empty(t, req.Header.Get(x402.HeaderPaymentSignature), "the caller's request is not modified")

	_, err = c.Pay(context.Background(), requestWithSignature(t, url), nil)
	require.ErrorIs(t, err, x402client.ErrAlreadyPaying)
}

func requestWithSignature(t testing.TB, url string) *http.Request {
	t.Helper()
	req := newRequest(t, http.MethodGet, url+"/paid")
	req.Header.Set(x402.HeaderPaymentSignature, "eyJ9")
	return req
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestNewValidatesConfig(t *testing.T) {
	key := newKey(t)
	for _, tc := range []struct {
		name string
		cfg  x402client.Config
	}{
		{"no key", x402client.Config{}},
		{"network without known USDC", x402client.Config{Key: key, Networks: []string{"eip155:1"}}},
		{"max amount not a number", x402client.Config{Key: key, MaxAmount: "ten"}},
		{"max amount zero", x402client.Config{Key: key, MaxAmount: "0"}},
		{"max amount with a leading zero", x402client.Config{Key: key, MaxAmount: "010"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x402client.New(tc.cfg)
			require.ErrorIs(t, err, x402client.ErrInvalidConfig)
		})
	}
	_, err := x402client.New(x402client.Config{Key: key})
	require.NoError(t, err)
}
