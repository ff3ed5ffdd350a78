package respond_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/browsertest"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// look shows the page in every look (browsertest.Looks: 1280 and 375 px
// wide, light and dark), fails the test where a person would trip (the
// page wider than the screen, a control without a name, text under 4.5:1
// of contrast), and saves each look as docs/respond/<name>-<look>.png (the whole page) when
// PC_RESPOND_SCREENSHOTS=1 (make screenshots).
func look(t *testing.T, browser context.Context, name string) {
	t.Helper()
	browsertest.EachLook(t, browser, "the respondent's "+name+" page", func(l browsertest.Look) {
		shot, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NotEmpty(t, shot)
		if os.Getenv("PC_RESPOND_SCREENSHOTS") == "1" {
			browsertest.SavePNG(t, shot, filepath.Join("..", "..", "..", "..", "docs", "respond", name+"-"+l.Name()+".png"))
		}
	})
}

// A person opens the link filings showed once, in headless Chromium: the
// page shows which case and respondent the link signs in as and signs in
// nothing until the person clicks "Sign in as …"; then the case page says
// who is signed in, the person joins, files the answer and sees it on the
// docket. Opened again, in the same browser or in another, the link is
// refused as used. The token never reaches a request line or a header:
// only the preview's and the exchange's form bodies.
func TestARespondentAnswersInChromium(t *testing.T) {
	bin := browsertest.Chromium(t, "the hosted respondent page")
	s := newStack(t)
	o := s.open(t)
	link := s.url + "/respond/" + o.id + "#login=" + o.login
	answer := "The goods were shipped on 2026-11-02; the tracking record is attached."

	browser := browsertest.New(t, bin, 30*time.Second)

	// Open the link: the module posts the token to the preview, and the
	// page says what the link signs in as. Nothing is spent and no session
	// exists: the link could be anyone's, sent to this person.
	require.NoError(t, chromedp.Do(browser,
		browsertest.OpenLink(link),
		chromedp.WaitVisible(`main[data-page="confirm"]`),
	))
	look(t, browser, "sign-in")
	location, err := chromedp.Run(browser, chromedp.Location())
	require.NoError(t, err)
	require.NotContains(t, location, o.login)
	for sel, want := range map[string]string{
		`#confirm-case`:     o.id,
		`#confirm-external`: "ext-" + o.id,
		`#confirm-as`:       "respondent org-beta (participant p-respondent)",
		`#signin button`:    "Sign in as respondent org-beta (participant p-respondent) on case " + o.id,
	} {
		got, err := chromedp.Run(browser, chromedp.Text(sel))
		require.NoError(t, err)
		require.Equal(t, want, got, sel)
	}
	spent, err := s.cases.LoginSpent(context.Background(), o.id, auth.HashToken(o.login))
	require.NoError(t, err)
	require.False(t, spent, "opening the link spent nothing")
	require.Empty(t, redistest.Keys(t, s.rdb, "pc:cases:*:case:"+o.id+":respond-session:*"), "and made no session")
	// The browser holds no session either: the case page, in another tab,
	// is the sign-in page.
	peek, cancelPeek := chromedp.NewContext(browser)
	t.Cleanup(cancelPeek)
	require.NoError(t, chromedp.Do(peek,
		chromedp.Navigate(s.url+"/respond/"+o.id),
		chromedp.WaitVisible(`#no-link`),
	))
	cancelPeek()

	// The click signs in: the case page, the fragment gone, a cookie no
	// script reads, and who is signed in above the case.
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`#signin button`),
		chromedp.WaitVisible(`main[data-page="case"]`),
	))
	location, err = chromedp.Run(browser, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, s.url+"/respond/"+o.id, location)
	cookies, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.cookie`))
	require.NoError(t, err)
	require.Empty(t, cookies, "the session cookie is HttpOnly: no script reads it")
	for sel, want := range map[string]string{
		`#who-case`: o.id,
		`#who-as`:   "org-beta (participant p-respondent)",
		`#status`:   "awaiting_respondent",
	} {
		got, err := chromedp.Run(browser, chromedp.Text(sel))
		require.NoError(t, err)
		require.Equal(t, want, got, sel)
	}
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#signout button`)))

	// Join, then file the answer.
	require.NoError(t, chromedp.Do(browser,
		chromedp.Click(`#join button`),
		chromedp.WaitVisible(`#answer-text`),
		chromedp.SendKeys(`#answer-text`, answer),
		chromedp.Click(`#answer button`),
		chromedp.WaitVisible(`#answer-filed`),
	))
	filed, err := chromedp.Run(browser, chromedp.Text(`#answer-filed`))
	require.NoError(t, err)
	require.Equal(t, answer, filed)
	docket, err := chromedp.Run(browser, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#docket li')].map(li => li.dataset.type)`))
	require.NoError(t, err)
	require.Equal(t, []string{"opened", "respondent_joined", "stage_opened", "answer_filed", "stage_opened"}, docket)
	require.Equal(t, docket, s.docket(t, o.id), "the API's docket is the page's")

	// The link opened again in this browser (a new tab: in the same tab
	// only the fragment would change, and no page would load): refused as
	// used, with the way back to the case this browser is signed in to.
	again, cancelAgain := chromedp.NewContext(browser)
	t.Cleanup(cancelAgain)
	require.NoError(t, chromedp.Do(again,
		browsertest.OpenLink(link),
		chromedp.WaitVisible(`main[data-refusal="login_used"]`),
		chromedp.WaitVisible(`#continue`),
	))
	look(t, again, "link-used")

	// And in another browser (a new browser context: no cookie): refused,
	// and nothing of the case shown.
	other, cancelOther := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelOther)
	require.NoError(t, chromedp.Do(other,
		browsertest.OpenLink(link),
		chromedp.WaitVisible(`main[data-refusal="login_used"]`),
	))
	body, err := chromedp.Run(other, chromedp.Text(`body`))
	require.NoError(t, err)
	require.Contains(t, body, "This link was used")
	require.NotContains(t, body, answer)
	require.NotContains(t, body, "Continue to the case")

	// What a log or a proxy could keep holds no token; every post came
	// from the page's own origin, as the browser says it.
	posts := 0
	for _, r := range s.requests() {
		require.NotContains(t, r.URL.String(), o.login)
		for name, values := range r.Header {
			require.NotContains(t, strings.Join(values, " "), o.login, "header %s", name)
		}
		require.Empty(t, r.Header.Get("Referer"), "%s %s", r.Method, r.URL)
		if r.Method == http.MethodPost {
			posts++
			require.Equal(t, "same-origin", r.Header.Get("Sec-Fetch-Site"), "%s", r.URL)
		}
	}
	require.Equal(t, 6, posts, "preview, exchange, join, answer, and two previews refused")
}

// The hosted respondent takes part in the whole case in Chromium: signs
// in, joins, answers, reads the claimant's message and marks it read,
// posts one, files a submission, confirms the record, and reads the
// award, each by a click on the page's own forms.
func TestARespondentTakesPartInTheWholeCaseInChromium(t *testing.T) {
	bin := browsertest.Chromium(t, "the hosted respondent page")
	s := newStack(t)
	o := s.open(t)
	browser := browsertest.New(t, bin, 60*time.Second)
	text := func(sel string) string {
		t.Helper()
		got, err := chromedp.Run(browser, chromedp.Text(sel))
		require.NoError(t, err, sel)
		return got
	}

	// Each click below posts a form; Submit waits for the page the post
	// loads, since the next control is often on the page being left too.
	require.NoError(t, chromedp.Do(browser,
		browsertest.OpenLink(s.url+"/respond/"+o.id+"#login="+o.login),
		chromedp.WaitVisible(`#signin button`),
	))
	browsertest.ClickThrough(t, browser, `#signin button`)
	browsertest.ClickThrough(t, browser, `#join button`)
	require.NoError(t, chromedp.Do(browser, chromedp.SendKeys(`#answer-text`, "We delivered.")))
	browsertest.ClickThrough(t, browser, `#answer button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#message-text`)))

	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActPostMessage, MessageID: "msg_claimant1", Digest: digest("Where is the parcel?")},
		store.Document{Digest: digest("Where is the parcel?"), Content: []byte("Where is the parcel?")})
	require.NoError(t, chromedp.Do(browser, chromedp.Reload(), chromedp.WaitVisible(`#mark-read button`)))
	browsertest.ClickThrough(t, browser, `#mark-read button`)
	require.Contains(t, text(`#messages`), "Where is the parcel?")
	unread, err := chromedp.Run(browser, chromedp.Evaluate[int](`document.querySelectorAll('#messages .unread').length`))
	require.NoError(t, err)
	require.Zero(t, unread, "marked read")

	require.NoError(t, chromedp.Do(browser, chromedp.SendKeys(`#message-text`, "In your warehouse since 2 November.")))
	browsertest.ClickThrough(t, browser, `#message button`)
	require.NoError(t, chromedp.Do(browser, chromedp.SendKeys(`#submission-text`, "The delivery receipt, signed.")))
	browsertest.ClickThrough(t, browser, `#submission button`)
	require.Contains(t, text(`#messages`), "In your warehouse since 2 November.")
	require.Contains(t, text(`#submissions [data-side="respondent"]`), "The delivery receipt, signed.")
	uploadsWithProgress(t, browser, s, o.id)
	timelineIsTheCases(t, browser, s, o.id, 4)
	look(t, browser, "case")

	// The claimant files its submission: the record awaits confirmation.
	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActFileSubmission, SubmissionID: "sub_claimant1", Digest: digest("The invoice.")},
		store.Document{Digest: digest("The invoice."), Content: []byte("The invoice.")})
	require.NoError(t, chromedp.Do(browser, chromedp.Reload(), chromedp.WaitVisible(`#confirm-record button`)))
	browsertest.ClickThrough(t, browser, `#confirm-record button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#record-confirmations [data-side="respondent"]`)))
	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActConfirmRecord})
	issueAward(t, s, o.id)
	require.NoError(t, chromedp.Do(browser,
		chromedp.Reload(),
		chromedp.WaitVisible(`#award`),
	))
	require.Equal(t, "claim_upheld", text(`#award-outcome`))
	require.Equal(t, "awarded", text(`#status`))
	timelineIsTheCases(t, browser, s, o.id, 4)
	look(t, browser, "awarded")

	// The award's html artifact opens through the page's session, drawn
	// with the design system it carries inline (its policy admits that
	// style element by hash), readable at 375 px and in the dark; on paper
	// black on white whatever the scheme.
	browsertest.ClickThrough(t, browser, `#award-links a`)
	require.Equal(t, "Award", text(`h1`))
	require.Equal(t, "SANDBOX — not binding", text(`#sandbox`))
	styled, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[getComputedStyle(document.body).fontFamily, getComputedStyle(document.body).backgroundColor,
	  getComputedStyle(document.querySelector('th')).backgroundColor, getComputedStyle(document.getElementById('sandbox')).backgroundColor]`))
	require.NoError(t, err)
	require.Equal(t, []string{`system-ui, -apple-system, "Segoe UI", sans-serif`, "rgb(255, 255, 255)", "rgb(245, 246, 248)", "rgb(164, 0, 0)"}, styled,
		"the base's type and colours: --bg, --surface, --fail")
	look(t, browser, "award")
	require.NoError(t, chromedp.Do(browser, chromedp.EmulateViewport(375, 812), chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print",
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	})))
	printed, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[getComputedStyle(document.body).color, getComputedStyle(document.body).backgroundColor,
	  getComputedStyle(document.getElementById('sandbox')).borderTopStyle, getComputedStyle(document.querySelector('table')).display]`))
	require.NoError(t, err)
	require.Equal(t, []string{"rgb(0, 0, 0)", "rgb(255, 255, 255)", "solid", "table"}, printed, "printed: black on white, the banner framed, tables whole")
	require.NoError(t, chromedp.Do(browser, chromedp.EmulateViewport(1280, 800), chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		return err
	})))

	require.Equal(t, []string{"opened", "respondent_joined", "stage_opened", "answer_filed", "stage_opened", "message_posted", "message_posted",
		"submission_filed", "submission_filed", "record_confirmation_requested", "record_confirmation_given", "record_confirmed",
		"evidence_export_ready", "evidence_export_ready"}, s.docket(t, o.id))
}

// timelineIsTheCases requires the case page's timeline, as the browser
// renders it, to draw the stored case's own timeline (n stages) with today
// inside it, each stage's window and the part that ran no wider than the
// chart.
func timelineIsTheCases(t *testing.T, browser context.Context, s *stack, id string, n int) {
	t.Helper()
	got, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll('svg.timeline g[data-stage]')]
	  .map(g => [g.dataset.stage, g.dataset.round, g.dataset.state, g.dataset.opened, g.dataset.deadline, g.dataset.closed || ''].join(' '))`))
	require.NoError(t, err)
	require.Len(t, got, n)
	var lanes []lane
	for _, g := range got {
		f := strings.Split(g, " ")
		lanes = append(lanes, lane{f[0], f[1], f[2], f[3], f[4], f[5]})
	}
	s.sameAsTheProcedure(t, id, lanes)
	inside, err := chromedp.Run(browser, chromedp.Evaluate[bool](`(() => {
	  const svg = document.querySelector('svg.timeline'), w = svg.viewBox.baseVal.width;
	  const x = Number(svg.querySelector('line.today').getAttribute('x1'));
	  return x >= 0 && x <= w && [...svg.querySelectorAll('rect')].every(r => Number(r.getAttribute('x')) >= 0 &&
	    Number(r.getAttribute('x')) + Number(r.getAttribute('width')) <= w + 0.01 && Number(r.getAttribute('width')) >= 0);
	})()`))
	require.NoError(t, err)
	require.True(t, inside, "today and every stage are drawn inside the chart")
}

// uploadsWithProgress uploads exhibits on the case page the browser shows,
// as a person does. A refused file (an archive) is told beside the form,
// in the problem's words, and the page stays; a 2 MiB text file sent over
// a connection throttled to 1 MiB/s shows its bytes sent of the total in
// the bar and in the live region, then the page lists it. With script
// disabled the same form posts as it is and the page lists that file too.
func uploadsWithProgress(t *testing.T, browser context.Context, s *stack, caseID string) {
	t.Helper()
	dir := t.TempDir()
	archive := filepath.Join(dir, "bundle.zip")
	require.NoError(t, os.WriteFile(archive, append([]byte("PK\x03\x04"), make([]byte, 60)...), 0o644))
	big := filepath.Join(dir, "tracking-log.txt")
	line := "2026-11-02T08:00:00Z parcel 123 scanned at the depot, on its way to the customer.\n"
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat(line, (2<<20)/len(line))), 0o644))

	// What the bar and the live region show is kept in sessionStorage,
	// which outlives the reload that follows a successful upload.
	const watch = `window.notReloaded = true;
	  const bar = document.getElementById('upload-bar'), said = document.getElementById('upload-status');
	  const keep = (k, v) => sessionStorage.setItem(k, JSON.stringify([...JSON.parse(sessionStorage.getItem(k) || '[]'), v]));
	  new MutationObserver(() => keep('bar', [bar.value, bar.max])).observe(bar, {attributes: true});
	  new MutationObserver(() => keep('said', said.textContent)).observe(said, {childList: true, characterData: true, subtree: true});
	  true`
	kept := func(key string) []any {
		t.Helper()
		got, err := chromedp.Run(browser, chromedp.Evaluate[[]any](`JSON.parse(sessionStorage.getItem('`+key+`') || '[]')`))
		require.NoError(t, err)
		return got
	}

	// The archive is refused: the problem's title, detail and code beside
	// the form, nothing filed, the page as it was.
	_, err := chromedp.Run(browser, chromedp.Evaluate[bool](watch))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(browser,
		chromedp.SetUploadFiles(`#exhibit-file`, []string{archive}),
		chromedp.Focus(`#upload-exhibit button[type="submit"]`),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`#upload-error`),
	))
	refused, err := chromedp.Run(browser, chromedp.Text(`#upload-error`))
	require.NoError(t, err)
	require.Contains(t, refused, "(exhibit_archive_refused)")
	require.Contains(t, refused, "Nothing was filed")
	stayed, err := chromedp.Run(browser, chromedp.Evaluate[bool](`window.notReloaded === true && !document.querySelector('#upload-exhibit button').disabled &&
	  document.getElementById('upload-progress').hidden`))
	require.NoError(t, err)
	require.True(t, stayed, "the page stays, the form ready again")
	require.Equal(t, "The upload was refused: nothing was filed.", lastOf(kept("said")))
	l, err := s.cases.Load(context.Background(), caseID)
	require.NoError(t, err)
	require.Empty(t, l.Case.Evidence.Exhibits)

	// The big file, over a slow connection: the bar climbs to the whole
	// request's size, and the live region says the bytes sent of the total.
	require.NoError(t, chromedp.Do(browser, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{{DownloadThroughput: -1, UploadThroughput: 1 << 20}}})
		return err
	})))
	_, err = chromedp.Run(browser, chromedp.Evaluate[bool](`sessionStorage.clear(); true`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(browser,
		chromedp.SetUploadFiles(`#exhibit-file`, []string{big}),
		chromedp.SendKeys(`#exhibit-description`, "The carrier's scan log"),
		chromedp.Focus(`#upload-exhibit button[type="submit"]`),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`#exhibits tr[data-exhibit]`),
	))
	require.NoError(t, chromedp.Do(browser, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{{DownloadThroughput: -1, UploadThroughput: -1}}})
		return err
	})))
	var sent int64
	for _, r := range s.requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/exhibits") {
			sent = r.ContentLength // the last: the big file's
		}
	}
	bars := kept("bar")
	require.NotEmpty(t, bars)
	final := bars[len(bars)-1].([]any)
	require.Equal(t, []any{float64(sent), float64(sent)}, final, "the bar ends full, at the request's %d bytes", sent)
	between := 0
	for _, b := range bars {
		v := b.([]any)
		if v[1].(float64) == float64(sent) && v[0].(float64) > 0 && v[0].(float64) < float64(sent) {
			between++
		}
	}
	require.Positive(t, between, "the bar moved through the upload: %v", bars)
	said := kept("said")
	require.Equal(t, "Sending the file…", said[0])
	require.Contains(t, said, "2.0 MiB of 2.0 MiB sent (100 %). The page is checking it…")
	require.Equal(t, "Uploaded tracking-log.txt. Loading the case…", lastOf(said))
	require.Regexp(t, `^\d+\.\d (KiB|MiB) of 2\.0 MiB sent \(\d+ %\)$`, said[1], "bytes sent of the total, in words")
	l, err = s.cases.Load(context.Background(), caseID)
	require.NoError(t, err)
	require.Len(t, l.Case.Evidence.Exhibits, 1)
	require.Equal(t, "The carrier's scan log", l.Case.Evidence.Exhibits[0].Description)

	// Without script the form posts as it is: the page lists the file.
	plain, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	receipt := filepath.Join(dir, "receipt.txt")
	require.NoError(t, os.WriteFile(receipt, []byte("Signed for by J. Doe.\n"), 0o644))
	require.NoError(t, chromedp.Do(plain, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}), chromedp.Navigate(s.url+"/respond/"+caseID), chromedp.WaitVisible(`#upload-exhibit`),
		chromedp.SetUploadFiles(`#exhibit-file`, []string{receipt})))
	browsertest.ClickThrough(t, plain, `#upload-exhibit button[type="submit"]`)
	files, err := chromedp.Run(plain, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#exhibits tr[data-exhibit] a')].map(a => a.textContent)`))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"tracking-log.txt", "receipt.txt"}, files)
	cancel()
	require.NoError(t, chromedp.Do(browser, chromedp.Reload(), chromedp.WaitVisible(`main[data-page="case"]`)))
}

func lastOf(xs []any) any { return xs[len(xs)-1] }
