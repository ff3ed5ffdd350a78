package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/libs/x402/x402client"
)

// TestTheSecurityProbeThroughTheEdge replays the probe of issue 7 against
// the running stack, through the edge, with credentials of three partners,
// two tenants and both environments. Every refusal leaves drafts, fees,
// memberships, capabilities, the payment journal and the ledger as they
// were. The service-level tests (services/filings/internal/httpapi) cover
// each item row by row; this one shows the holes are closed where a
// partner meets the system.
func TestTheSecurityProbeThroughTheEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service; skipped with -short")
	}
	st := startStack(t)
	p := newProbe(t, st)

	a := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")
	b := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-b", "")
	c := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-c", "")
	otherTenant := p.mint(t, "tenant-two", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")
	live := p.mint(t, "tenant-dev", auth.Live, auth.RolePlatformOrchestrator, "partner-a", "")
	strangers := map[string]minted{"a partner with no participant": c, "another tenant": otherTenant, "the other environment": live}

	t.Run("2: consent is recorded only by the participant's partner", func(t *testing.T) {
		d := p.prepare(t, a, bundledAcrossPartners())
		require.Equal(t, http.StatusAccepted, p.do(t, "POST", "/api/v2/case-drafts/"+d.DraftID+"/confirmations", a, p.key(), d.confirmation("p-claimant", a.cred.PublicID, "org-acme")).status)
		consent := map[string]any{"draftId": d.DraftID, "participantId": "p-respondent", "draftDigest": d.DraftDigest, "consentReference": "signed-terms-2026-11-22"}
		p.unchanged(t, func() {
			r := p.do(t, "POST", "/api/v2/authorizations/consents", a, p.key(), consent)
			require.Equal(t, http.StatusForbidden, r.status, string(r.body))
			require.Equal(t, "forbidden", r.code)
			for who, cred := range strangers {
				r := p.do(t, "POST", "/api/authorizations/consents", cred, p.key(), consent)
				require.Equal(t, http.StatusNotFound, r.status, "%s: %s", who, r.body)
				require.Equal(t, "draft_not_found", r.code, who)
			}
		})
		opened := p.do(t, "POST", "/api/v2/authorizations/consents", b, p.key(), consent)
		require.Equal(t, http.StatusCreated, opened.status, string(opened.body))
		require.Equal(t, "no-store", opened.header.Get("Cache-Control"), "6: the 201 shows secrets once")
		require.Contains(t, string(opened.body), `"showOnce"`)
		require.NotContains(t, string(opened.body), "?login=", "14: the login token is never in a query string")
	})

	t.Run("3: an orchestrator acts only where its partner has a participant", func(t *testing.T) {
		d := p.prepare(t, a, feeGated())
		grant := map[string]any{"resource": "draft:" + d.DraftID, "side": "respondent", "credentialId": c.cred.PublicID}
		p.unchanged(t, func() {
			for who, cred := range strangers {
				for _, r := range []reply{
					p.do(t, "GET", "/api/v2/case-drafts/"+d.DraftID, cred, "", nil),
					p.do(t, "GET", "/api/filings/"+d.DraftID, cred, "", nil),
					p.do(t, "POST", "/api/v2/case-drafts/"+d.DraftID+"/confirmations", cred, p.key(), d.confirmation("p-claimant", cred.cred.PublicID, "org-acme")),
					p.do(t, "GET", "/api/v2/authorizations/authority-grants?resource=draft:"+d.DraftID, cred, "", nil),
					p.do(t, "POST", "/api/v2/authorizations/authority-grants", cred, p.key(), grant),
					p.do(t, "DELETE", "/api/v2/authorizations/authority-grants?resource=draft:"+d.DraftID+"&credentialId="+a.cred.PublicID, cred, p.key(), nil),
				} {
					require.Equal(t, http.StatusNotFound, r.status, "%s: %s", who, r.body)
					require.Equal(t, "draft_not_found", r.code, who)
				}
				for _, r := range []reply{
					p.do(t, "GET", "/api/fees/"+d.FeeID, cred, "", nil),
					p.do(t, "POST", "/api/fees/"+d.FeeID+"/checkout", cred, p.key(), map[string]any{}),
					p.do(t, "POST", "/api/fees/"+d.FeeID+"/x402", cred, "", nil),
				} {
					require.Equal(t, http.StatusNotFound, r.status, "%s: %s", who, r.body)
					require.Equal(t, "fee_not_found", r.code, who)
				}
			}
		})
	})

	t.Run("7: a principal membership names an agent identity, never a string", func(t *testing.T) {
		d := p.prepare(t, a, bundledAcrossPartners())
		p.unchanged(t, func() {
			r := p.do(t, "POST", "/api/v2/authorizations/authority-grants", b, p.key(),
				map[string]any{"resource": "draft:" + d.DraftID, "side": "respondent", "principalId": "org-beta"})
			require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
			require.Equal(t, "invalid_grant", r.code)
		})
	})

	t.Run("1: one payment pays one fee, in any tenant", func(t *testing.T) {
		respondentA := p.mint(t, "tenant-dev", auth.Sandbox, auth.RoleRespondentAgent, "partner-a", "agent-bob-7")
		respondentT2 := p.mint(t, "tenant-two", auth.Sandbox, auth.RoleRespondentAgent, "partner-a", "agent-bob-7")
		first := p.readyToOpen(t, a, respondentA)
		second := p.readyToOpen(t, otherTenant, respondentT2)
		third := p.readyToOpen(t, a, respondentA)
		payer, err := x402client.New(x402client.Config{Key: localfacilitator.DevAccounts()[2].Key, MaxAmount: "1000000000"})
		require.NoError(t, err)

		paid := p.payFee(t, payer, a, first.FeeID)
		require.Equal(t, http.StatusCreated, paid.Response.StatusCode, string(paid.Body))
		require.Equal(t, "no-store", paid.Response.Header.Get("Cache-Control"))
		for _, target := range []struct {
			who  string
			cred minted
			fee  string
		}{{"another tenant's fee", otherTenant, second.FeeID}, {"another fee of the same partner", a, third.FeeID}} {
			p.unchanged(t, func() {
				again := p.retryFee(t, payer, target.cred, target.fee, paid.Payment)
				require.Equal(t, http.StatusConflict, again.Response.StatusCode, "%s: %s", target.who, again.Body)
				require.Contains(t, string(again.Body), `"code":"payment_already_used"`, target.who)
			})
		}
	})

	t.Run("1: twenty presentations of one payment to twenty fees open one case and settle once", func(t *testing.T) {
		const n = 20
		fees := make([]string, n)
		payers := make([]minted, n)
		for i := range n {
			// A credential per draft, so the per-credential rate limit is
			// not what refuses anything here.
			payers[i] = p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")
			respondent := p.mint(t, "tenant-dev", auth.Sandbox, auth.RoleRespondentAgent, "partner-a", "agent-bob-7")
			fees[i] = p.readyToOpen(t, payers[i], respondent).FeeID
		}
		offer := p.feeOffer(t, payers[0], fees[0])
		wallet := localfacilitator.DevAccounts()[4]
		payment, err := x402.NewExactPayment(wallet.Key, offer, time.Now(), rand.Reader)
		require.NoError(t, err)
		header, err := x402.EncodeHeader(payment)
		require.NoError(t, err)
		ledger := localfacilitator.NewLedger(p.rdb)
		before, err := ledger.Balance(context.Background(), offer.Network, offer.Asset, wallet.Address.Hex())
		require.NoError(t, err)

		statuses := make([]reply, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				statuses[i] = p.do(t, "POST", "/api/fees/"+fees[i]+"/x402", payers[i], "", nil, x402.HeaderPaymentSignature, header)
			})
		}
		wg.Wait()
		opened := 0
		for i, r := range statuses {
			if r.status == http.StatusCreated {
				opened++
				continue
			}
			require.Equal(t, http.StatusConflict, r.status, "fee %d: %s", i, r.body)
			require.Contains(t, []string{"payment_already_used", "payment_in_progress"}, r.code, string(r.body))
		}
		require.Equal(t, 1, opened, "one payment opens one case")
		after, err := ledger.Balance(context.Background(), offer.Network, offer.Asset, wallet.Address.Hex())
		require.NoError(t, err)
		amount, err := strconv.ParseUint(offer.Amount, 10, 64)
		require.NoError(t, err)
		require.Equal(t, before-amount, after, "the payer is charged once")
		paid := 0
		for i, fee := range fees {
			r := p.do(t, "GET", "/api/fees/"+fee, payers[i], "", nil)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			if strings.Contains(string(r.body), `"status":"paid"`) {
				paid++
			}
		}
		require.Equal(t, 1, paid, "one fee shows paid")
	})

	t.Run("1: a payment for one resource pays for no other, across routes", func(t *testing.T) {
		respondent := p.mint(t, "tenant-dev", auth.Sandbox, auth.RoleRespondentAgent, "partner-a", "agent-bob-7")
		d := p.readyToOpen(t, a, respondent)
		payer, err := x402client.New(x402client.Config{Key: localfacilitator.DevAccounts()[5].Key, MaxAmount: "1000000000"})
		require.NoError(t, err)

		// A readiness report's payment, presented to a fee.
		report, err := http.NewRequest(http.MethodPost, p.edge+"/api/x402/dispute-readiness", nil)
		require.NoError(t, err)
		body := readinessExample(t)
		bought, err := payer.Pay(context.Background(), report, body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, bought.Response.StatusCode, string(bought.Body))
		p.unchanged(t, func() {
			again := p.retryFee(t, payer, a, d.FeeID, bought.Payment)
			require.Equal(t, http.StatusPaymentRequired, again.Response.StatusCode, string(again.Body))
		})

		// A fee's payment, presented to the readiness report.
		paid := p.payFee(t, payer, a, d.FeeID)
		require.Equal(t, http.StatusCreated, paid.Response.StatusCode, string(paid.Body))
		p.unchanged(t, func() {
			report, err := http.NewRequest(http.MethodPost, p.edge+"/api/x402/dispute-readiness", nil)
			require.NoError(t, err)
			again, err := payer.Retry(context.Background(), report, body, paid.Payment)
			var rejected *x402client.RejectedError
			if !errors.As(err, &rejected) {
				require.NoError(t, err)
			}
			require.NotEqual(t, http.StatusOK, again.Response.StatusCode, "a fee's payment buys no report: %s", again.Body)
			require.Less(t, again.Response.StatusCode, 500, string(again.Body))
		})
	})

	t.Run("4: a live fee offers main networks only and refuses test money", func(t *testing.T) {
		d := p.prepare(t, live, feeGated())
		r := p.do(t, "POST", "/api/fees/"+d.FeeID+"/checkout", live, p.key(), map[string]any{})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.NotContains(t, string(r.body), "eip155:84532", "no test network in a live offer")
		offer := p.feeOffer(t, live, d.FeeID)
		require.True(t, x402.NetworkAllowed(x402.EnvironmentLive, offer.Network), offer.Network)

		// The same fee, paid with Base Sepolia USDC signed by a funded
		// development wallet: refused before anything is claimed.
		sepolia, ok := x402.USDC("eip155:84532")
		require.True(t, ok)
		testOffer, err := sepolia.Offer(offer.Amount, common.HexToAddress(offer.PayTo), offer.MaxTimeoutSeconds)
		require.NoError(t, err)
		payment, err := x402.NewExactPayment(localfacilitator.DevAccounts()[6].Key, testOffer, time.Now(), rand.Reader)
		require.NoError(t, err)
		header, err := x402.EncodeHeader(payment)
		require.NoError(t, err)
		p.unchanged(t, func() {
			r := p.do(t, "POST", "/api/fees/"+d.FeeID+"/x402", live, "", nil, x402.HeaderPaymentSignature, header)
			require.Equal(t, http.StatusPaymentRequired, r.status, string(r.body))
			var challenge x402.PaymentRequired
			require.NoError(t, x402.DecodeHeader(r.header.Get(x402.HeaderPaymentRequired), &challenge))
			require.Equal(t, x402.ReasonInvalidNetwork, challenge.Error)
		})
	})

	t.Run("5: headers beyond 32 KiB are refused with a problem", func(t *testing.T) {
		r := p.do(t, "GET", "/api/v2/integration", a, "", nil, "X-Padding", strings.Repeat("x", 40<<10))
		require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, r.status)
		require.Equal(t, "header_too_large", r.code)
	})

	t.Run("8: absolute URLs come from the configured base, not the client", func(t *testing.T) {
		d := p.prepare(t, a, feeGated())
		r := p.do(t, "POST", "/api/fees/"+d.FeeID+"/x402", a, "", nil,
			"Host", "attacker.example", "X-Forwarded-Host", "attacker.example", "X-Forwarded-Proto", "http", "X-Forwarded-Prefix", "/evil")
		require.Equal(t, http.StatusPaymentRequired, r.status, string(r.body))
		var challenge x402.PaymentRequired
		require.NoError(t, x402.DecodeHeader(r.header.Get(x402.HeaderPaymentRequired), &challenge))
		require.Equal(t, p.edge+"/api/fees/"+d.FeeID+"/x402", challenge.Resource.URL)
	})

	t.Run("9-11, 13: bad input is refused precisely and changes nothing", func(t *testing.T) {
		p.unchanged(t, func() {
			dup := p.raw(t, "POST", "/api/v2/case-drafts", a, p.key(), []byte(`{"externalCaseId":"x","externalCaseId":"y"}`))
			require.Equal(t, "duplicate_member", dup.code, string(dup.body))

			body := feeGated()
			body["participants"].([]map[string]any)[0]["principalId"] = "org-\u202eemca"
			bidi := p.do(t, "POST", "/api/v2/case-drafts", a, p.key(), body)
			require.Equal(t, http.StatusBadRequest, bidi.status, string(bidi.body))
			require.Equal(t, "unsafe_characters", bidi.code)

			long := p.do(t, "GET", "/api/v2/case-drafts/"+strings.Repeat("d", 20_000), a, "", nil)
			require.Equal(t, http.StatusNotFound, long.status)
			require.Less(t, len(long.body), 2048, "the echo is clipped")

			two := p.do(t, "GET", "/api/v2/integration", a, "", nil, "Authorization", "Bearer "+b.token)
			require.Equal(t, http.StatusBadRequest, two.status)
			require.Equal(t, "ambiguous_credential", two.code)
		})
	})

	t.Run("12: one credential is paced", func(t *testing.T) {
		busy := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")
		limited := p.flood(t, 400, func() reply { return p.do(t, "GET", "/api/fees/fee_unknown", busy, "", nil) })
		require.Equal(t, "rate_limited", limited.code, string(limited.body))
		require.Contains(t, string(limited.body), "with this credential", "the credential's own budget refused it")
		require.NotEmpty(t, limited.header.Get("Retry-After"))
		fresh := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")
		require.Equal(t, http.StatusNotFound, p.do(t, "GET", "/api/fees/fee_unknown", fresh, "", nil).status, "another credential is not slowed")
	})

	// Last: it spends this address's failed-authentication budget.
	t.Run("12: failed authentications are throttled", func(t *testing.T) {
		var last reply
		for range 25 {
			last = p.do(t, "GET", "/api/v2/integration", minted{token: "pc_sandbox_" + strings.Repeat("0", 40)}, "", nil)
			if last.status == http.StatusTooManyRequests {
				break
			}
		}
		require.Equal(t, http.StatusTooManyRequests, last.status)
		require.Equal(t, "rate_limited", last.code)
		require.NotEmpty(t, last.header.Get("Retry-After"))
	})

	// Last of all: it spends this address's request budget.
	t.Run("12: one client address is paced", func(t *testing.T) {
		limited := p.flood(t, 4000, func() reply { return p.do(t, "GET", "/api/webhooks/keys", minted{}, "", nil) })
		require.Equal(t, "rate_limited", limited.code, string(limited.body))
		require.Contains(t, string(limited.body), "from this address", "the address's budget refused it")
		require.NotEmpty(t, limited.header.Get("Retry-After"))
	})
}

// flood sends at most max requests from eight clients at once and returns
// the first 429 answer; it fails the test if none came.
func (p *probe) flood(t *testing.T, max int, send func() reply) reply {
	t.Helper()
	var (
		sent    atomic.Int64
		mu      sync.Mutex
		limited *reply
		wg      sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for sent.Add(1) <= int64(max) {
				r := send()
				if r.status == http.StatusTooManyRequests {
					mu.Lock()
					if limited == nil {
						limited = &r
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	require.NotNil(t, limited, "no 429 within %d requests", max)
	return *limited
}

// feeOffer is the x402 requirement a fee's checkout commits.
func (p *probe) feeOffer(t *testing.T, who minted, feeID string) x402.PaymentRequirements {
	t.Helper()
	r := p.do(t, "POST", "/api/fees/"+feeID+"/checkout", who, p.key(), map[string]any{})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var checkout struct {
		Data struct {
			X402 x402.PaymentRequired `json:"x402"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &checkout))
	require.NotEmpty(t, checkout.Data.X402.Accepts)
	return checkout.Data.X402.Accepts[0]
}

func readinessExample(t *testing.T) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "readiness-request.json"))
	require.NoError(t, err)
	return body
}

// probe talks to a running stack as partners do.
type probe struct {
	edge  string // http://host:port of the edge
	rdb   redis.UniversalClient
	creds *auth.Store
	// documented makes every exchange fail the test unless the OpenAPI
	// document describes it (the journey); the probe sends what no
	// document describes, on purpose.
	documented bool
}

type minted struct {
	token string
	cred  auth.Credential
}

type reply struct {
	status int
	code   string
	header http.Header
	body   []byte
}

func newProbe(t *testing.T, st stackAddrs) *probe {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: st.redis, IsClusterMode: len(st.redis) > 1})
	t.Cleanup(func() { rdb.Close() })
	return &probe{edge: "http://" + st.edge, rdb: rdb, creds: auth.NewStore(rdb, auth.DefaultStoreConfig())}
}

func (p *probe) mint(t *testing.T, tenant string, env auth.Environment, role auth.Role, partner, agent string) minted {
	t.Helper()
	token, cred, err := p.creds.Mint(context.Background(), auth.MintRequest{Tenant: tenant, Environment: env, Role: role, PartnerID: partner, AgentID: agent, Label: "security probe"})
	require.NoError(t, err)
	return minted{token: token, cred: cred}
}

func (p *probe) key() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "probe-" + hex.EncodeToString(b)
}

// do sends a JSON body (nil: none) with the credential, an Idempotency-Key
// when key is set, and extra header pairs ("Host" sets the request's host).
func (p *probe) do(t *testing.T, method, path string, who minted, key string, body any, headers ...string) reply {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(t, err)
	}
	return p.raw(t, method, path, who, key, raw, headers...)
}

func (p *probe) raw(t *testing.T, method, path string, who minted, key string, body []byte, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, p.edge+path, bytes.NewReader(body))
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if who.token != "" {
		req.Header.Set("Authorization", "Bearer "+who.token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if p.documented {
		req.Body = io.NopCloser(bytes.NewReader(body))
		apitest.Response(t, req, resp, b)
	}
	var prob struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(b, &prob)
	return reply{status: resp.StatusCode, code: prob.Code, header: resp.Header, body: b}
}

// bookkeeping are the keys a refusal may write: idempotency records, rate
// limits and the services' own relay bookkeeping, and the outboxes: the
// relays drain them concurrently, and an event is only ever appended in the
// same step that changes a draft or a payment, which are compared.
func bookkeeping(key string) bool {
	for _, part := range []string{":idem:", "lease", ":relay", ":outbox"} {
		if strings.Contains(key, part) {
			return true
		}
	}
	return false
}

// unchanged runs act and requires it to leave drafts and fees, grants and
// capabilities, the x402 journal and the ledger as they were.
func (p *probe) unchanged(t *testing.T, act func()) {
	t.Helper()
	redistest.Unchanged(t, p.rdb, bookkeeping, act, "pc:filings:*", "pc:auth:members:*", "pc:auth:cap:*", "pc:x402:*", "pc:facilitator:*")
}

type draftView struct {
	DraftID       string `json:"draftId"`
	DraftDigest   string `json:"draftDigest"`
	FeeID         string
	Confirmations []struct {
		ParticipantID         string `json:"participantId"`
		ConfirmationStatement string `json:"confirmationStatement"`
	} `json:"confirmations"`
}

func (d draftView) confirmation(participant, actor, principal string) map[string]any {
	statement := ""
	for _, c := range d.Confirmations {
		if c.ParticipantID == participant {
			statement = c.ConfirmationStatement
		}
	}
	return map[string]any{
		"participantId": participant, "draftDigest": d.DraftDigest, "confirmationStatement": statement,
		"actorId": actor, "principalId": principal, "confirmationMethod": "protocol_act", "confirmationReference": "ref-" + participant,
	}
}

func (p *probe) prepare(t *testing.T, who minted, body map[string]any) draftView {
	t.Helper()
	r := p.do(t, "POST", "/api/v2/case-drafts", who, p.key(), body)
	require.Equal(t, http.StatusCreated, r.status, string(r.body))
	var env struct {
		Data struct {
			draftView
			Fee struct {
				FeeID string `json:"feeId"`
			} `json:"fee"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &env))
	d := env.Data.draftView
	d.FeeID = env.Data.Fee.FeeID
	return d
}

// readyToOpen prepares a fee-gated draft as orch, grants its partner's
// respondent agent the respondent side, and has both sides confirm: the
// draft waits for its fee.
func (p *probe) readyToOpen(t *testing.T, orch, respondent minted) draftView {
	t.Helper()
	d := p.prepare(t, orch, feeGated())
	require.Equal(t, http.StatusAccepted, p.do(t, "POST", "/api/v2/case-drafts/"+d.DraftID+"/confirmations", orch, p.key(), d.confirmation("p-claimant", orch.cred.PublicID, "org-acme")).status)
	g := p.do(t, "POST", "/api/v2/authorizations/authority-grants", orch, p.key(), map[string]any{"resource": "draft:" + d.DraftID, "side": "respondent", "credentialId": respondent.cred.PublicID})
	require.Equal(t, http.StatusCreated, g.status, string(g.body))
	last := p.do(t, "POST", "/api/v2/case-drafts/"+d.DraftID+"/confirmations", respondent, p.key(), d.confirmation("p-respondent", "agent-bob-7", "agent-bob"))
	require.Equal(t, http.StatusAccepted, last.status, string(last.body))
	require.Contains(t, string(last.body), `"status":"ready_to_open"`)
	checkout := p.do(t, "POST", "/api/fees/"+d.FeeID+"/checkout", orch, p.key(), map[string]any{})
	require.Equal(t, http.StatusOK, checkout.status, string(checkout.body))
	return d
}

func (p *probe) feeRequest(t *testing.T, who minted, feeID string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, p.edge+"/api/fees/"+url.PathEscape(feeID)+"/x402", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+who.token)
	return req
}

func (p *probe) payFee(t *testing.T, payer *x402client.Client, who minted, feeID string) *x402client.Result {
	t.Helper()
	res, err := payer.Pay(context.Background(), p.feeRequest(t, who, feeID), nil)
	require.NoError(t, err)
	return res
}

func (p *probe) retryFee(t *testing.T, payer *x402client.Client, who minted, feeID string, payment x402.PaymentPayload) *x402client.Result {
	t.Helper()
	res, err := payer.Retry(context.Background(), p.feeRequest(t, who, feeID), nil, payment)
	var rejected *x402client.RejectedError
	if !errors.As(err, &rejected) {
		require.NoError(t, err)
	}
	return res
}

func twoPartyDraft() map[string]any {
	return map[string]any{
		"externalCaseId":             "partner-case-42",
		"caseMode":                   "proceeding",
		"intakeMode":                 "bilateral_api",
		"claimantAcceptanceIdentity": "claims@acme.example",
		"confirmationPolicy":         map[string]any{"mode": "all_participants"},
		"procedure":                  map[string]any{"profile": "standard"},
		"participants": []map[string]any{
			{"participantId": "p-claimant", "side": "claimant", "principalId": "org-acme", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
			{"participantId": "p-respondent", "side": "respondent", "principalId": "agent-bob", "principalKind": "ai_agent", "agentId": "agent-bob-7", "authorizationMode": "agent_credential"},
		},
		"claim": map[string]any{"amountInDisputeMinor": 125000, "remedy": "money_obligation", "summary": "Goods paid for, never delivered."},
	}
}

// feeGated is a draft whose fee is collected before the case opens.
func feeGated() map[string]any {
	body := twoPartyDraft()
	body["intakeMode"] = "claimant_initiated"
	body["claim"] = map[string]any{"amountInDisputeMinor": 2_000_000, "remedy": "money_obligation", "summary": "A wholesale order was paid and never shipped."}
	return body
}

// bundledAcrossPartners is a draft whose respondent, of partner-b, consents
// through a bundled authorization its partner records.
func bundledAcrossPartners() map[string]any {
	body := twoPartyDraft()
	body["intakeMode"] = "bundled_bilateral"
	body["confirmationPolicy"] = map[string]any{"mode": "bundled_authorizations"}
	body["participants"] = []map[string]any{
		{"participantId": "p-claimant", "side": "claimant", "principalId": "org-acme", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
		{"participantId": "p-respondent", "side": "respondent", "principalId": "org-beta", "principalKind": "organization", "authorizationMode": "bundled_authorization", "partnerId": "partner-b"},
	}
	return body
}
