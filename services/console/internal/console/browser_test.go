package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/browsertest"
	"github.com/pcourt/pcourt/services/console/internal/console"
)

// screenshot shows the page in every look (browsertest.Looks: 1280 and
// 375 px wide, light and dark), fails the test where a person would trip
// (the page wider than the screen, a control without a name, text under
// 4.5:1 of contrast), and saves each look as
// docs/console/<name>-<look>.png when PC_CONSOLE_SCREENSHOTS=1 (how the
// pictures of docs/console.md are made; make screenshots), and otherwise
// only takes it, so the step is exercised either way.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	browsertest.EachLook(t, ctx, "the "+name+" page", func(l browsertest.Look) {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0); true`))
		require.NoError(t, err)
		shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		require.NotEmpty(t, shot)
		if os.Getenv("PC_CONSOLE_SCREENSHOTS") == "1" {
			file := filepath.Join("..", "..", "..", "..", "docs", "console", name+"-"+l.Name()+".png")
			browsertest.SavePNG(t, shot, file)
		}
	})
}

// unlabelled lists the page's visible form controls without a label.
const unlabelled = `[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
  .filter(e => !e.labels || e.labels.length === 0).map(e => e.id || e.name)`

// A partner's engineer walks the console in headless Chromium, against
// the real webhooks service and the edge's own proxy: the link minted
// through the API opens a session; an endpoint is registered pointing at a
// failing receiver; a case opens and its events flow; the attempts fail
// and the endpoints page shows the health and the date failures would
// disable it; the receiver is fixed and the failed window recovered in one
// confirmation; the replays succeed; a test event arrives; a delivery the
// receiver got verifies in the browser and a tampered body is refused at
// the digest step (and the page's module agrees with every conformance
// vector); a deprecated alias called through the edge with
// SERVICE_API_CANONICAL_ROUTES=true shows on the compatibility page with
// its Sunset date; the spent link is refused, and another partner's
// console shows none of it.
func TestAPartnersEngineerWalksTheConsoleInChromium(t *testing.T) {
	bin := browsertest.Chromium(t, "the partner console")
	// Retirement announcements on, the compatibility window starting
	// today: the alias is announced with a Sunset in the future.
	s := newStack(t, withCompat(policyEnv(time.Now().UTC().Format(time.DateOnly))))
	v := loadVectors(t)
	acme, acmeCred := s.partner(t, "acme")
	rcv := newReceiver(t, http.StatusInternalServerError)
	minted := s.mint(t, acme)
	link, linkID := minted.Data.URL, minted.Data.ID

	limit := 120 * time.Second
	if os.Getenv("PC_CONSOLE_SCREENSHOTS") == "1" {
		limit = 5 * time.Minute // re-encoding each picture takes seconds under -race
	}
	browser := browsertest.New(t, bin, limit, chromedp.WindowSize(1100, 760))
	require.NoError(t, chromedp.Do(browser, chromedp.EmulateViewport(1100, 760)))
	labelled := func(page string) {
		t.Helper()
		labels, err := chromedp.Run(browser, chromedp.Evaluate[[]string](unlabelled))
		require.NoError(t, err)
		require.Empty(t, labels, "every control of the %s page is labelled", page)
	}
	// reloadUntil reloads the current page until the script holds.
	reloadUntil := func(what, script string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ok, err := chromedp.Run(browser, chromedp.Evaluate[bool](script))
			require.NoError(t, err)
			if ok {
				return
			}
			require.True(t, time.Now().Before(deadline), "waited 30 s for %s", what)
			time.Sleep(200 * time.Millisecond)
			require.NoError(t, chromedp.Do(browser, chromedp.Reload(), chromedp.WaitReady(`main`)))
		}
	}
	statuses := `[...document.querySelectorAll('#deliveries tbody tr')].map(r => r.dataset.status)`

	// Open the link: the module posts the token to the preview, and the
	// page says which partner, tenant and environment the link signs in
	// as. Nothing is spent and no session made until the click; then the
	// browser lands on the deliveries with the fragment gone, a cookie no
	// script reads, and who is signed in in the header.
	require.NoError(t, chromedp.Do(browser, browsertest.OpenLink(link), chromedp.WaitVisible(`main[data-page="confirm"]`)))
	location, err := chromedp.Run(browser, chromedp.Location())
	require.NoError(t, err)
	require.NotContains(t, location, "#link=")
	for sel, want := range map[string]string{
		`#confirm-partner`:     "acme",
		`#confirm-tenant`:      acmeCred.Tenant,
		`#confirm-environment`: "sandbox",
		`#signin button`:       "Sign in as partner acme (" + acmeCred.Tenant + ", sandbox)",
	} {
		got, err := chromedp.Run(browser, chromedp.Text(sel))
		require.NoError(t, err)
		require.Equal(t, want, got, sel)
	}
	browsertest.EachLook(t, browser, "the sign-in confirmation page", nil)
	stored, err := s.store.GetLink(context.Background(), linkID)
	require.NoError(t, err)
	require.Equal(t, console.LinkIssued, stored.State, "opening the link spent nothing (its confirmation walked with the keyboard too)")
	require.Zero(t, s.rdb.Exists(context.Background(), "pc:console:{"+linkID+"}:session").Val(), "and made no session")
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`#signin button`), chromedp.WaitVisible(`main[data-page="deliveries"]`)))
	for sel, want := range map[string]string{`#partner`: "acme", `#tenant`: acmeCred.Tenant, `#environment`: "sandbox"} {
		got, err := chromedp.Run(browser, chromedp.Text(`#signed-in-as `+sel))
		require.NoError(t, err)
		require.Equal(t, want, got, sel)
	}
	location, err = chromedp.Run(browser, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, s.url+"/console/deliveries", location)
	cookies, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.cookie`))
	require.NoError(t, err)
	require.Empty(t, cookies)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#no-deliveries`)))
	labelled("deliveries")

	// Register an endpoint at the (failing) receiver for two event types,
	// with the keyboard.
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`nav a[href$="/endpoints"]`),
		chromedp.WaitVisible(`#create-endpoint`),
		chromedp.SendKeys(`#ep-url`, rcv.url),
		chromedp.SendKeys(`#ep-description`, "orders"),
		chromedp.Focus(`input[name="eventTypes"][value="opened"]`),
		chromedp.KeyEvent(" "),
		chromedp.Focus(`input[name="eventTypes"][value="answer_filed"]`),
		chromedp.KeyEvent(" "),
		chromedp.Focus(`#create-endpoint button[type="submit"]`),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`tr[data-endpoint]`),
	))
	ep, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.querySelector('tr[data-endpoint]').dataset.endpoint`))
	require.NoError(t, err)
	labelled("endpoints")

	// A case opens: its events flow to the endpoint and fail.
	s.openCase(t, acmeCred, "case_walk", "opened", "answer_filed")
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(s.url+"/console/deliveries?status=failed"), chromedp.WaitReady(`main`)))
	reloadUntil("two failed deliveries", statuses+`.length === 2`)
	// The chart of the last 24 hours draws the API's deliveries by
	// outcome, hour by hour.
	outcomesMatchTheAPI := func(wantFailed, wantDelivered int) {
		t.Helper()
		var want, drawn []string
		// A clock hour may turn between the page and the API's answer:
		// then both are asked again.
		for try := 0; try < 3 && (want == nil || !slices.Equal(want, drawn)); try++ {
			if try > 0 {
				require.NoError(t, chromedp.Do(browser, chromedp.Reload(), chromedp.WaitReady(`main`)))
			}
			want = s.apiOutcomes(t, acme)
			var err error
			drawn, err = chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('svg.outcomes g[data-hour]')]
			  .map(g => [g.dataset.hour, g.dataset.delivered, g.dataset.failed, g.dataset.cancelled, g.dataset.scheduled].join(' '))`))
			require.NoError(t, err)
		}
		require.Len(t, want, 24)
		require.Equal(t, want, drawn, "the deliveries chart draws the API's figures")
		for class, n := range map[string]int{"fail": wantFailed, "ok": wantDelivered} {
			counted, err := chromedp.Run(browser, chromedp.Evaluate[int](`[...document.querySelectorAll('svg.outcomes rect.`+class+`')]
			  .filter(r => Number(r.getAttribute('height')) > 0).reduce((sum, r) => sum + Number(r.dataset.count), 0)`))
			require.NoError(t, err)
			require.Equal(t, n, counted, "the %s segments drawn", class)
		}
	}
	outcomesMatchTheAPI(2, 0)
	screenshot(t, browser, "deliveries")
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`#deliveries tbody tr a`),
		chromedp.WaitVisible(`main[data-page="delivery"]`),
		chromedp.Click(`section.attempt details summary`),
	))
	attempts, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('section.attempt h3')].map(h => h.textContent)`))
	require.NoError(t, err)
	require.Equal(t, []string{"Attempt 1: failure · HTTP 500", "Attempt 2: failure · HTTP 500"}, attempts)
	keyID, err := chromedp.Run(browser, chromedp.Text(`.key-id`))
	require.NoError(t, err)
	require.Equal(t, rcv.keyID(t), keyID, "the key the receiver was told")
	screenshot(t, browser, "delivery")

	// The endpoints page: no success, four failures, and the date the
	// endpoint will be disabled if they go on.
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`nav a[href$="/endpoints"]`), chromedp.WaitVisible(`tr[data-endpoint="`+ep+`"] .health`)))
	// The sender records the health just after each delivery's record.
	reloadUntil("the health of all four attempts", `document.querySelector('tr[data-endpoint="`+ep+`"] .health').textContent.includes('4 consecutive failures')`)
	health, err := chromedp.Run(browser, chromedp.Text(`tr[data-endpoint="`+ep+`"] .health`))
	require.NoError(t, err)
	require.Contains(t, health, "0.0 % of 4 attempts succeeded")
	require.Contains(t, health, "4 consecutive failures")
	require.Regexp(t, `Disabled on \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ if failures go on`, health)
	// The chart draws the API's hours: each bar's figures are the API's
	// for the same window, over 24 hours and over 7 days.
	chartMatchesTheAPI := func(window string, hours int) {
		t.Helper()
		var want, drawn []string
		// A clock hour may turn between the page and the API's answer:
		// then both are asked again.
		for try := 0; try < 3 && (want == nil || !slices.Equal(want, drawn)); try++ {
			if try > 0 {
				require.NoError(t, chromedp.Do(browser, chromedp.Reload(), chromedp.WaitReady(`main`)))
			}
			status, answer := s.hookAPI(t, "GET", "/api/webhooks/endpoints/"+ep+"/health?window="+window, acme, nil)
			require.Equal(t, http.StatusOK, status)
			want = nil
			for _, raw := range answer["data"].(map[string]any)["hours"].([]any) {
				h := raw.(map[string]any)
				want = append(want, fmt.Sprintf("%s %v %v %v %v", h["start"], h["attempts"], h["successes"], h["latencyP50Ms"], h["latencyP95Ms"]))
			}
			var err error
			drawn, err = chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('tr[data-endpoint="`+ep+`"] svg.hours g[data-hour]')]
			  .map(g => [g.dataset.hour, g.dataset.attempts, g.dataset.successes, g.dataset.p50, g.dataset.p95].join(' '))`))
			require.NoError(t, err)
		}
		require.Len(t, want, hours)
		require.Equal(t, want, drawn, "the %s chart draws the API's figures", window)
		heights, err := chromedp.Run(browser, chromedp.Evaluate[float64](`[...document.querySelectorAll('tr[data-endpoint="`+ep+`"] svg.hours rect.fail')]
		  .reduce((sum, r) => sum + Number(r.getAttribute('height')), 0)`))
		require.NoError(t, err)
		require.Positive(t, heights, "the failed attempts are drawn")
	}
	chartMatchesTheAPI("24h", 24)
	screenshot(t, browser, "endpoints")
	browsertest.ClickThrough(t, browser, `nav.window a[href$="?window=7d"]`)
	chartMatchesTheAPI("7d", 168)
	screenshot(t, browser, "endpoints-7d")

	// The edit form, with the keyboard: the picker shows the current types.
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`tr[data-endpoint="`+ep+`"] a[href$="/edit"]`),
		chromedp.WaitVisible(`#edit-endpoint`),
	))
	ticked, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#edit-endpoint input[name=eventTypes]:checked')].map(e => e.value)`))
	require.NoError(t, err)
	require.Equal(t, []string{"opened", "answer_filed"}, ticked)
	labelled("edit")
	browsertest.EachLook(t, browser, "the edit page", nil)
	require.NoError(t, chromedp.Do(browser,
		chromedp.Focus(`#ed-description`),
		chromedp.KeyEvent(kb.End),
		chromedp.KeyEvent(" and refunds"),
		chromedp.Focus(`#edit-endpoint button[type="submit"]`),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`tr[data-endpoint="`+ep+`"]`),
	))
	described, err := chromedp.Run(browser, chromedp.Text(`tr[data-endpoint="`+ep+`"] td small`))
	require.NoError(t, err)
	require.Contains(t, described, "orders and refunds")

	// The receiver is fixed; the failed window is recovered in one
	// confirmation, after the count.
	rcv.status.Store(http.StatusNoContent)
	time.Sleep(time.Second) // "until now" ends a whole second after the failures
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`tr[data-endpoint="`+ep+`"] a.recover-window`),
		chromedp.WaitVisible(`#recover-count`),
	))
	count, err := chromedp.Run(browser, chromedp.Text(`#recover-count`))
	require.NoError(t, err)
	require.Equal(t, "2 deliveries would be replayed.", count)
	labelled("recover")
	screenshot(t, browser, "recover")
	// The recovery's page follows it live: its module asks for the
	// page again and copies the API's figures over, into the bars and
	// the live region, with no reload, until the recovery is over. The
	// receiver holds its answers until the page is watched, so that a
	// fast machine cannot finish the two replays before it renders.
	release := rcv.holdAnswers(t)
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`#recover button`), chromedp.WaitVisible(`main[data-page="recovery"]`)))
	said, err := chromedp.Run(browser, chromedp.Evaluate[string](`window.notReloaded = true;
	  window.said = [document.getElementById('recovery-summary').textContent];
	  new MutationObserver(() => window.said.push(document.getElementById('recovery-summary').textContent))
	    .observe(document.getElementById('recovery-summary'), {childList: true, characterData: true, subtree: true});
	  document.getElementById('recovery-progress').dataset.finished`))
	require.NoError(t, err)
	require.Equal(t, "false", said, "the recovery has just started")
	release()
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#recovery-progress[data-finished="true"]`)))
	live, err := chromedp.Run(browser, chromedp.Evaluate[map[string]any](`({notReloaded: window.notReloaded === true, said: window.said,
	  figures: {...document.getElementById('recovery-progress').dataset},
	  sent: [document.getElementById('recovery-sent').value, document.getElementById('recovery-sent').max],
	  live: document.getElementById('recovery-live').textContent})`))
	require.NoError(t, err)
	require.Equal(t, true, live["notReloaded"], "the figures came without a reload")
	require.Greater(t, len(live["said"].([]any)), 1, "the live region said the new figures: %v", live["said"])
	require.Equal(t, "2 of 2 queued, 2 delivered. Done.", last(live["said"].([]any)))
	require.Equal(t, []any{2.0, 2.0}, live["sent"])
	require.Equal(t, "The recovery is over: these figures will not change.", live["live"])
	figures := live["figures"].(map[string]any)
	status, job := s.hookAPI(t, "GET", "/api/webhooks/endpoints/"+ep+"/recoveries/"+figures["recovery"].(string), acme, nil)
	require.Equal(t, http.StatusOK, status)
	j, replays := job["data"].(map[string]any), job["data"].(map[string]any)["replays"].(map[string]any)
	for attr, want := range map[string]any{"status": j["status"], "total": j["total"], "scanned": j["scanned"], "scheduled": j["scheduled"],
		"delivered": replays["delivered"], "failed": replays["failed"], "cancelled": replays["cancelled"], "pending": replays["scheduled"]} {
		require.Equal(t, fmt.Sprint(want), figures[attr], "the page's %s is the API's", attr)
	}
	labelled("recovery")
	screenshot(t, browser, "recovery")
	browsertest.ClickThrough(t, browser, `#recovery-deliveries`)
	reloadUntil("the two replays delivered", `[...document.querySelectorAll('#deliveries tbody tr')].filter(r => r.dataset.status === 'delivered' && r.querySelector('small a')).length === 2`)
	replayed, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#deliveries tbody tr small a')].map(a => a.textContent).sort()`))
	require.NoError(t, err)
	var originals []string
	for _, d := range s.deliveries(t, acme, "status=failed") {
		originals = append(originals, d["id"].(string))
	}
	sort.Strings(originals)
	require.Equal(t, originals, replayed, "each replay links to its original")
	outcomesMatchTheAPI(2, 2)

	// A test event from the endpoints page reaches the receiver.
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`nav a[href$="/endpoints"]`),
		chromedp.WaitVisible(`#test-type-`+ep),
		chromedp.SetValue(`#test-type-`+ep, "deadline_approaching"),
		chromedp.Click(`tr[data-endpoint="`+ep+`"] form.test-event button`),
		chromedp.WaitVisible(`main[data-page="delivery"]`),
	))
	reloadUntil("the test event delivered", `document.getElementById('delivery-status').textContent === 'delivered'`)

	// Verify a delivery the receiver got, pasted as it arrived, then the
	// same with a tampered body.
	var got receivedRequest
	for _, r := range rcv.received() {
		if strings.Contains(string(r.Body), `"type":"opened"`) && r.Header.Get("X-Pc-Key-Id") != "" {
			got = r
		}
	}
	require.NotEmpty(t, got.Body)
	var headerText strings.Builder
	for _, name := range []string{"Content-Digest", "X-Pc-Event-Id", "X-Pc-Event-Timestamp", "X-Pc-Key-Id", "X-Pc-Schema-Version", "X-Pc-Signature-Version", "X-Pc-Signature", "X-Pc-Endpoint-Id", "X-Pc-Test"} {
		require.NotEmpty(t, got.Header.Get(name), name)
		headerText.WriteString(strings.ToLower(name) + ": " + got.Header.Get(name) + "\n")
	}
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`nav a[href$="/verify"]`),
		chromedp.WaitVisible(`#verify-form`),
		chromedp.SetValue(`#v-headers`, headerText.String()),
		chromedp.SetValue(`#v-body`, string(got.Body)),
		chromedp.SetValue(`#v-endpoint`, "we_someone_else"),
		chromedp.Click(`#verify-form button`),
		chromedp.WaitVisible(`#v-result[data-reason="recipient_mismatch"]`),
		chromedp.SetValue(`#v-endpoint`, got.Header.Get("X-Pc-Endpoint-Id")),
		chromedp.Click(`#verify-form button`),
		chromedp.WaitVisible(`#v-result[data-reason="ok"]`),
	))
	require.Equal(t, ep, got.Header.Get("X-Pc-Endpoint-Id"), "signed for the endpoint it was sent to")
	labelled("verify")
	tampered := strings.Replace(string(got.Body), `"case_walk"`, `"case_walk2"`, 1)
	require.NotEqual(t, string(got.Body), tampered)
	require.NoError(t, chromedp.Do(browser,
		chromedp.SetValue(`#v-body`, tampered),
		chromedp.Click(`#verify-form button`),
		chromedp.WaitVisible(`#v-result[data-reason="digest_mismatch"]`),
	))
	verdict, err := chromedp.Run(browser, chromedp.Text(`#v-result`))
	require.NoError(t, err)
	require.Contains(t, verdict, "Refused at the digest step")
	screenshot(t, browser, "verify")

	// The page's module gives every conformance vector its expected verdict.
	vectorsJSON, err := json.Marshal(v.Vectors)
	require.NoError(t, err)
	verdicts, err := chromedp.Run(browser, chromedp.Evaluate[map[string]string](`(async () => {
  const m = await import('/console/static/verify.js');
  const jwks = `+string(v.JWKS)+`;
  const out = {};
  for (const v of `+string(vectorsJSON)+`) {
    const body = Uint8Array.from(atob(v.bodyBase64), (c) => c.charCodeAt(0));
    const r = await m.verify(v.headers, body, jwks, Date.parse(v.now), `+strconv.Quote(v.EndpointID)+`, `+jsInt(v.ToleranceSeconds*1000)+`);
    out[v.name] = r.ok ? 'accept' : r.reason;
  }
  return out;
})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Len(t, verdicts, len(v.Vectors))
	for _, vec := range v.Vectors {
		want := "accept"
		if vec.Reason != nil {
			want = *vec.Reason
		}
		require.Equal(t, want, verdicts[vec.Name], vec.Name)
	}

	// The event catalogue: every type with a signed example request.
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`nav a[href$="/events"]`), chromedp.WaitVisible(`#event-types`)))
	examples, err := chromedp.Run(browser, chromedp.Evaluate[int](`document.querySelectorAll('section.example pre.request').length`))
	require.NoError(t, err)
	require.Equal(t, len(console.EventTableRows())+len(console.DecisionTableRows())+len(console.EvidenceTableRows())+len(console.AfterAwardTableRows())+len(console.SettlementTableRows()), examples,
		"the procedure's, the decision's, the evidence's, the after-award's and the settlement's events")
	labelled("events")
	screenshot(t, browser, "events")

	// An example pasted into Verify verifies with the conformance key set
	// at its signing time, and is refused at the key id step by the
	// deployment's keys: it can never pass for a delivery.
	exHeaders, err := chromedp.Run(browser, chromedp.Evaluate[string](`[...document.querySelectorAll('#ex-opened .h')].map(e => e.textContent).join('\n')`))
	require.NoError(t, err)
	exBody, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.querySelector('#ex-opened .b').textContent`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`nav a[href$="/verify"]`),
		chromedp.WaitVisible(`#verify-form`),
		chromedp.SetValue(`#v-headers`, exHeaders),
		chromedp.SetValue(`#v-body`, exBody),
		chromedp.SetValue(`#v-keyset`, "jwks-conformance"),
		chromedp.SetValue(`#v-endpoint`, console.ExampleEndpointID),
		chromedp.SendKeys(`#v-now`, console.ExampleSignedAt.Format("2006-01-02T15:04:05.000Z")),
		chromedp.Click(`#verify-form button`),
		chromedp.WaitVisible(`#v-result[data-reason="ok"]`),
		chromedp.SetValue(`#v-keyset`, "jwks"),
		chromedp.Click(`#verify-form button`),
		chromedp.WaitVisible(`#v-result[data-reason="unknown_key"]`),
	))

	// Keys: the key that signed the newest attempt signs now.
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`nav a[href$="/keys"]`), chromedp.WaitVisible(`#keys`)))
	signsNow, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.querySelector('.signs-now').closest('tr').dataset.kid`))
	require.NoError(t, err)
	require.Equal(t, rcv.keyID(t), signsNow)
	state, err := chromedp.Run(browser, chromedp.Text(`tr[data-kid="`+signsNow+`"] .state`))
	require.NoError(t, err)
	require.Equal(t, "active", state)
	labelled("keys")
	screenshot(t, browser, "keys")

	// The partner's backend calls a deprecated alias through the edge; the
	// compatibility page shows it with its Sunset date and "fix by".
	req, err := http.NewRequest(http.MethodGet, s.url+"/api/v2/webhooks/deliveries?limit=1", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+acme)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the alias is still served")
	require.NotEmpty(t, resp.Header.Get("Sunset"), "and announced")
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`nav a[href$="/compatibility"]`), chromedp.WaitReady(`main[data-page="compatibility"]`)))
	reloadUntil("the alias on the compatibility page", `!!document.querySelector('tr[data-route="/api/v2/webhooks/deliveries"]')`)
	sunset, err := chromedp.Run(browser, chromedp.Text(`tr[data-route="/api/v2/webhooks/deliveries"] .sunset`))
	require.NoError(t, err)
	sunsetAt, err := time.Parse(time.RFC1123, resp.Header.Get("Sunset"))
	require.NoError(t, err)
	require.Equal(t, sunsetAt.UTC().Format(time.DateOnly), sunset, "the Sunset the edge announced")
	row, err := chromedp.Run(browser, chromedp.Text(`tr[data-route="/api/v2/webhooks/deliveries"]`))
	require.NoError(t, err)
	require.Contains(t, row, "fix by "+sunset)
	labelled("compatibility")
	for cell, want := range map[string]string{".last-24h": "1", ".last-30d": "1", ".sample": resp.Header.Get("X-Request-Id")} {
		got, err := chromedp.Run(browser, chromedp.Text(`tr[data-route="/api/v2/webhooks/deliveries"] `+cell))
		require.NoError(t, err)
		require.Equal(t, want, got, cell)
	}
	// The chart draws the edge's calls per day for the route, the same 30
	// days, and says the Sunset (a line on its day once it falls within
	// them).
	var wantDays, drawnDays []string
	// A UTC day may turn between the page and the usage read: then both
	// are asked again.
	for try := 0; try < 3 && (wantDays == nil || !slices.Equal(wantDays, drawnDays)); try++ {
		if try > 0 {
			require.NoError(t, chromedp.Do(browser, chromedp.Reload(), chromedp.WaitReady(`main`)))
		}
		usageReq, err := http.NewRequest(http.MethodGet, s.url+"/api/compatibility/usage", nil)
		require.NoError(t, err)
		usageReq.Header.Set("Authorization", "Bearer "+acme)
		usageResp, err := http.DefaultClient.Do(usageReq)
		require.NoError(t, err)
		var usage struct {
			Data struct {
				Routes []struct {
					Route      string `json:"route"`
					CallsByDay []struct {
						Day   string `json:"day"`
						Calls int64  `json:"calls"`
					} `json:"callsByDay"`
				} `json:"routes"`
			} `json:"data"`
		}
		require.NoError(t, json.NewDecoder(usageResp.Body).Decode(&usage))
		usageResp.Body.Close()
		wantDays = nil
		for _, r := range usage.Data.Routes {
			if r.Route == "/api/v2/webhooks/deliveries" {
				for _, d := range r.CallsByDay {
					wantDays = append(wantDays, fmt.Sprintf("%s %d", d.Day, d.Calls))
				}
			}
		}
		drawnDays, err = chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('figure[data-route="/api/v2/webhooks/deliveries"] svg.days g[data-day]')]
		  .map(g => g.dataset.day + ' ' + g.dataset.calls)`))
		require.NoError(t, err)
	}
	require.Len(t, wantDays, 30)
	require.Equal(t, wantDays, drawnDays, "the chart draws the edge's calls per day")
	caption, err := chromedp.Run(browser, chromedp.Text(`figure[data-route="/api/v2/webhooks/deliveries"] figcaption small`))
	require.NoError(t, err)
	require.Contains(t, caption, "Sunset: "+sunset)
	screenshot(t, browser, "compatibility")

	require.NoError(t, chromedp.Do(browser, chromedp.Click(`nav a[href$="/audit"]`), chromedp.WaitVisible(`#audit`)))
	actions, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#audit tbody tr')].map(r => r.dataset.action)`))
	require.NoError(t, err)
	require.Equal(t, []string{"keys_viewed", "test_event_sent", "recovery_started", "endpoint_updated", "endpoint_created", "link_exchanged", "link_minted"}, actions)
	labelled("audit")
	screenshot(t, browser, "audit")

	// The spent link, in a new tab of this browser: refused.
	again, cancelAgain := chromedp.NewContext(browser)
	t.Cleanup(cancelAgain)
	require.NoError(t, chromedp.Do(again, browsertest.OpenLink(link), chromedp.WaitVisible(`main[data-refusal="link_used"]`)))
	browsertest.EachLook(t, again, "the refusal of a used link", nil)

	// Another partner's link, opened in this browser: the page says it is
	// signed in as acme and the link is globex's, and switches nothing
	// until the person confirms.
	globex, _ := s.partner(t, "globex")
	require.NoError(t, chromedp.Do(again,
		browsertest.OpenLink(s.mint(t, globex).Data.URL),
		chromedp.WaitVisible(`main[data-page="confirm"] #current-session[data-same="false"]`),
	))
	switchTo, err := chromedp.Run(again, chromedp.Text(`#signin button`))
	require.NoError(t, err)
	require.Contains(t, switchTo, "Sign out of acme (sandbox) and sign in as partner globex")
	require.NoError(t, chromedp.Do(again, chromedp.Navigate(s.url+"/console/deliveries"), chromedp.WaitVisible(`#signed-in-as`)))
	still, err := chromedp.Run(again, chromedp.Text(`#partner`))
	require.NoError(t, err)
	require.Equal(t, "acme", still, "not switched")

	// Another partner's link, in another browser context: none of acme's data.
	other, cancelOther := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelOther)
	require.NoError(t, chromedp.Do(other, browsertest.OpenLink(s.mint(t, globex).Data.URL), chromedp.WaitVisible(`#signin button`),
		chromedp.Click(`#signin button`), chromedp.WaitVisible(`#no-deliveries`)))
	for _, page := range []string{"deliveries", "endpoints", "compatibility", "audit"} {
		require.NoError(t, chromedp.Do(other, chromedp.Navigate(s.url+"/console/"+page), chromedp.WaitVisible(`main[data-page="`+page+`"]`)))
		body, err := chromedp.Run(other, chromedp.Text(`body`))
		require.NoError(t, err)
		for _, acmes := range append([]string{ep, rcv.url, "/api/v2/webhooks/deliveries", "endpoint_created"}, originals...) {
			require.NotContains(t, body, acmes, page)
		}
	}
	require.NoError(t, chromedp.Do(other, chromedp.Navigate(s.url+"/console/deliveries/"+originals[0]), chromedp.WaitVisible(`main[data-refusal="delivery_not_found"]`)))
	require.NoError(t, chromedp.Do(other, chromedp.Navigate(s.url+"/console/endpoints/"+ep+"/recover"), chromedp.WaitVisible(`main[data-refusal="endpoint_not_found"]`)))
}

func jsInt(n int) string { b, _ := json.Marshal(n); return string(b) }

func last(xs []any) any { return xs[len(xs)-1] }
