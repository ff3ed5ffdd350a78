package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color/palette"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// chromium finds a Chromium to drive, or skips the test saying how to get
// one.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	t.Skip("no Chromium found: the browser test of the partner console is skipped (Debian: apt-get install chromium; .ci/run installs it)")
	return ""
}

// screenshot saves the viewport as docs/console/<name>.png when
// PC_CONSOLE_SCREENSHOTS=1 (how the pictures of docs/console.md are made),
// and otherwise only takes it, so the step is exercised either way.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0); true`))
	require.NoError(t, err)
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NotEmpty(t, shot)
	if os.Getenv("PC_CONSOLE_SCREENSHOTS") == "1" {
		require.NoError(t, os.WriteFile(filepath.Join("..", "..", "..", "..", "docs", "console", name+".png"), smallPNG(t, shot), 0o644))
	}
}

// smallPNG re-encodes a screenshot with the web-safe palette and the best
// compression: a page of text and flat colours loses little, and the file
// a third of its size.
func smallPNG(t *testing.T, b []byte) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	pal := image.NewPaletted(img.Bounds(), palette.WebSafe)
	draw.Draw(pal, img.Bounds(), img, img.Bounds().Min, draw.Src)
	var out bytes.Buffer
	require.NoError(t, (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, pal))
	return out.Bytes()
}

// unlabelled lists the page's visible form controls without a label.
const unlabelled = `[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
  .filter(e => !e.labels || e.labels.length === 0).map(e => e.id || e.name)`

// A partner's engineer walks the console in headless Chromium: the link
// minted through the API opens a session, an endpoint is registered, the
// failed deliveries and one delivery's attempts are read, a pasted
// delivery verifies in the browser and a tampered body is refused at the
// digest step (and the page's module agrees with every conformance
// vector), the spent link is refused, and another partner's console shows
// none of it.
func TestAPartnersEngineerWalksTheConsoleInChromium(t *testing.T) {
	bin := chromium(t)
	s := newStack(t)
	v := loadVectors(t)
	acme, acmeCred := s.partner(t, "acme")
	s.owner.addEndpoint(scopeKey(acmeCred), "we_a", "https://acme.example/hook")
	s.owner.addDelivery(t, scopeKey(acmeCred), "dlv_acme_ok", "we_a", "delivered", v, "accept_rotated_key")
	s.owner.addDelivery(t, scopeKey(acmeCred), "dlv_acme_failed", "we_a", "failed", v, "accept_basic")
	first := time.Date(2026, 9, 2, 8, 30, 0, 0, time.UTC)
	s.recordUse(t, acmeCred, "/api/v2/cases/{caseId}", first, first.Add(72*time.Hour), 41)
	s.env = policyEnv("2026-03-01")
	link := s.mint(t, acme).Data.URL

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 760),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
	)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	require.NoError(t, chromedp.Do(browser, chromedp.EmulateViewport(1100, 760)))

	// Open the link: the module posts the token, the browser lands on the
	// deliveries with the fragment gone and a cookie no script reads.
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(link), chromedp.WaitVisible(`main[data-page="deliveries"]`)))
	location, err := chromedp.Run(browser, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, s.url+"/console/deliveries", location)
	cookies, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.cookie`))
	require.NoError(t, err)
	require.Empty(t, cookies)
	rows, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#deliveries tbody tr')].map(r => r.dataset.status)`))
	require.NoError(t, err)
	require.Equal(t, []string{"failed", "delivered"}, rows)
	labels, err := chromedp.Run(browser, chromedp.Evaluate[[]string](unlabelled))
	require.NoError(t, err)
	require.Empty(t, labels, "every control of the deliveries page is labelled")
	screenshot(t, browser, "deliveries")

	// Register an endpoint for two event types.
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`nav a[href$="/endpoints"]`),
		chromedp.WaitVisible(`#create-endpoint`),
		chromedp.SendKeys(`#ep-url`, "https://acme.example/new-hook"),
		chromedp.SendKeys(`#ep-description`, "orders"),
		chromedp.Click(`input[name="eventTypes"][value="opened"]`),
		chromedp.Click(`input[name="eventTypes"][value="answer_filed"]`),
		chromedp.Click(`#create-endpoint button[type="submit"]`),
		chromedp.WaitVisible(`tr[data-endpoint="we_1"]`),
	))
	labels, err = chromedp.Run(browser, chromedp.Evaluate[[]string](unlabelled))
	require.NoError(t, err)
	require.Empty(t, labels, "every control of the endpoints page is labelled")
	screenshot(t, browser, "endpoints")

	// Failed deliveries, then one delivery's attempts.
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`nav a[href$="/deliveries"]`),
		chromedp.WaitVisible(`#f-status`),
		chromedp.SetValue(`#f-status`, "failed"),
		chromedp.Click(`form.filters button`),
		chromedp.WaitReady(`#f-status option[value="failed"][selected]`),
	))
	rows, err = chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#deliveries tbody tr')].map(r => r.dataset.status)`))
	require.NoError(t, err)
	require.Equal(t, []string{"failed"}, rows)
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`a[href$="/deliveries/dlv_acme_failed"]`),
		chromedp.WaitVisible(`main[data-page="delivery"]`),
		chromedp.Click(`section.attempt details summary`),
	))
	keyID, err := chromedp.Run(browser, chromedp.Text(`.key-id`))
	require.NoError(t, err)
	require.Equal(t, "pcwh_sandbox_2026-11-23_73b7bc42a572", keyID)
	screenshot(t, browser, "delivery")

	// Verify a pasted delivery, then the same with a tampered body.
	vec := v.Vectors[0]
	require.Equal(t, "accept_basic", vec.Name)
	var headerText strings.Builder
	for _, h := range vec.Headers {
		headerText.WriteString(h[0] + ": " + h[1] + "\n")
	}
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`nav a[href$="/verify"]`),
		chromedp.WaitVisible(`#verify-form`),
		chromedp.SetValue(`#v-headers`, headerText.String()),
		chromedp.SetValue(`#v-body`, vec.Body),
		chromedp.SendKeys(`#v-now`, vec.Now),
		chromedp.Click(`#verify-form button`),
		chromedp.WaitVisible(`#v-result[data-reason="ok"]`),
	))
	labels, err = chromedp.Run(browser, chromedp.Evaluate[[]string](unlabelled))
	require.NoError(t, err)
	require.Empty(t, labels, "every control of the verify page is labelled")
	tampered := strings.Replace(vec.Body, "partner-order-4411", "partner-order-4412", 1)
	require.NotEqual(t, vec.Body, tampered)
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
    const r = await m.verify(v.headers, body, jwks, Date.parse(v.now), `+jsInt(v.ToleranceSeconds*1000)+`);
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

	// Keys, compatibility and the audit trail.
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`nav a[href$="/keys"]`), chromedp.WaitVisible(`#keys`)))
	signsNow, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.querySelector('.signs-now').closest('tr').dataset.kid`))
	require.NoError(t, err)
	require.Equal(t, "pcwh_sandbox_2026-11-23_73b7bc42a572", signsNow, "the key of the newest attempt (dlv_acme_failed)")
	screenshot(t, browser, "keys")
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`nav a[href$="/compatibility"]`), chromedp.WaitVisible(`#compat`)))
	sunset, err := chromedp.Run(browser, chromedp.Text(`tr[data-route="/api/v2/cases/{caseId}"] .sunset`))
	require.NoError(t, err)
	require.Regexp(t, `^20\d\d-\d\d-\d\d$`, sunset)
	screenshot(t, browser, "compatibility")
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`nav a[href$="/audit"]`), chromedp.WaitVisible(`#audit`)))
	actions, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#audit tbody tr')].map(r => r.dataset.action)`))
	require.NoError(t, err)
	require.Equal(t, []string{"endpoint_created", "link_exchanged", "link_minted"}, actions)
	screenshot(t, browser, "audit")

	// The spent link, in a new tab of this browser: refused.
	again, cancelAgain := chromedp.NewContext(browser)
	t.Cleanup(cancelAgain)
	require.NoError(t, chromedp.Do(again, chromedp.Navigate(link), chromedp.WaitVisible(`main[data-refusal="link_used"]`)))

	// Another partner's link, in another browser context: none of acme's data.
	globex, _ := s.partner(t, "globex")
	other, cancelOther := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelOther)
	require.NoError(t, chromedp.Do(other, chromedp.Navigate(s.mint(t, globex).Data.URL), chromedp.WaitVisible(`#no-deliveries`)))
	for _, page := range []string{"deliveries", "endpoints", "compatibility", "audit"} {
		require.NoError(t, chromedp.Do(other, chromedp.Navigate(s.url+"/console/"+page), chromedp.WaitVisible(`main[data-page="`+page+`"]`)))
		body, err := chromedp.Run(other, chromedp.Text(`body`))
		require.NoError(t, err)
		for _, acmes := range []string{"dlv_acme", "acme.example", "/api/v2/cases/{caseId}", "endpoint_created"} {
			require.NotContains(t, body, acmes, page)
		}
	}
	require.NoError(t, chromedp.Do(other, chromedp.Navigate(s.url+"/console/deliveries/dlv_acme_failed"), chromedp.WaitVisible(`main[data-refusal="delivery_not_found"]`)))
}

func jsInt(n int) string { b, _ := json.Marshal(n); return string(b) }
