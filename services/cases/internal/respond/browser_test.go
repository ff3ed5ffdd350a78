package respond_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

	// The award's html artifact opens through the page's session.
	browsertest.ClickThrough(t, browser, `#award-links a`)
	require.Equal(t, "The award", text(`p`))

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
