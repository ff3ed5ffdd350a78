// Package browsertest drives a real headless Chromium in tests, the way a
// person meets the hosted pages: the respondent's page and the partner
// console. It is test support, like redistest and nginxtest.
package browsertest

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// Chromium finds a Chromium to drive, or skips the test, naming what it
// would have tested and how to get one.
func Chromium(t testing.TB, what string) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	t.Skipf("no Chromium found: the browser test of %s is skipped (Debian: apt-get install chromium; .ci/run installs it)", what)
	return ""
}

// New starts a headless Chromium from bin with a profile of its own, ended
// with the test or after timeout, whichever comes first. extra adds to (or
// overrides) the flags, such as a window size.
func New(t testing.TB, bin string, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
	}, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	return browser
}

// OpenLink opens a sign-in link: a page whose own script, as soon as it
// runs, posts the link's token in a form and so navigates away. Chromium
// may report the first navigation as net::ERR_ABORTED (in Page.navigate's
// answer, or as the document request cancelled) when that post starts
// before it has told the driver the first document finished loading, which
// a loaded machine makes likely; chromedp.Navigate would fail the test
// although the page did exactly what it should. OpenLink accepts that one
// error and waits for nothing: the caller waits for what the page must
// show next, and that is what the test checks.
func OpenLink(url string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		res, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: url})
		if err != nil {
			return err
		}
		if res.ErrorText != "" && res.ErrorText != "net::ERR_ABORTED" {
			return fmt.Errorf("page load error %s", res.ErrorText)
		}
		return nil
	})
}

// ClickThrough clicks sel, a form's button or a link, and waits for the
// page the click loads (through any redirect, as after a POST that
// answers 303). Waiting for a selector instead races when the selector is
// also on the page being left: the test would type into, or read, the old
// page while the post is still on its way.
func ClickThrough(t testing.TB, browser context.Context, sel string) {
	t.Helper()
	resp, err := chromedp.RunResponse(browser, chromedp.Click(sel))
	if err != nil {
		t.Fatalf("clicking through %s: %v", sel, err)
	}
	if resp.Status >= 400 {
		t.Fatalf("clicking through %s: the page loaded answered %d %s", sel, resp.Status, resp.StatusText)
	}
}

// AddPlatformAuthenticator gives the browser's tab a virtual platform
// authenticator as a phone's or a laptop's is (CTAP 2.1, internal
// transport, resident keys, user verification that succeeds, presence
// without a touch), so a page's passkey ceremonies run unattended, and
// returns its id.
func AddPlatformAuthenticator(t testing.TB, browser context.Context) webauthn.AuthenticatorID {
	t.Helper()
	var id webauthn.AuthenticatorID
	err := chromedp.Do(browser, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		off := false
		if _, err := cdp.Call(ctx, target, webauthn.Enable, webauthn.EnableParams{EnableUI: &off}); err != nil {
			return err
		}
		res, err := cdp.Call(ctx, target, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
			Options: &webauthn.VirtualAuthenticatorOptions{
				Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21,
				Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true, HasUserVerification: true,
				IsUserVerified: true, AutomaticPresenceSimulation: true,
			},
		})
		id = res.AuthenticatorID
		return err
	}))
	if err != nil {
		t.Fatalf("adding a virtual authenticator: %v", err)
	}
	return id
}
