package browsertest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/browsertest"
)

// A page made well: every control in order, each showing its focus, each
// activated by its key; the walk sends nothing and follows nothing.
const goodPage = `<!doctype html><html lang="en"><head><title>Good</title><style>
:focus-visible { outline: 3px solid #1a5fb4; outline-offset: 2px; }
</style></head><body>
<a href="/elsewhere">A link</a>
<form action="/sent" method="post">
<label for="n">Name</label> <input id="n" name="n">
<label><input type="checkbox" name="c"> Tick</label>
<input type="radio" name="r" value="1" id="r1" checked><label for="r1">One</label>
<input type="radio" name="r" value="2" id="r2"><label for="r2">Two</label>
<label for="s">Pick</label> <select id="s"><option>a</option><option>b</option></select>
<button type="submit">Send</button>
</form>
<details><summary>More</summary><a href="/hidden">A link inside, closed</a></details>
<button type="button" tabindex="-1">Out of the order on purpose</button>
</body></html>`

// A page made badly: a focus ring too faint to see, a button whose ring is
// taken away, a span playing a button that no key presses, a positive
// tabindex that jumps the order, and a field that traps Tab, so the
// button after it is never reached.
const badPage = `<!doctype html><html lang="en"><head><title>Bad</title><style>
a:focus-visible { outline: 1px solid #eeeeee; }
button:focus { outline: none; }
</style></head><body>
<a href="/elsewhere">Faint ring</a>
<button type="button">No ring</button>
<span role="button" tabindex="0" id="fake">Fake button</span>
<input id="jumps" tabindex="3" aria-label="Jumps the queue">
<input id="trap" aria-label="Trap">
<button type="button" id="after" style="outline: 3px solid red">After the trap</button>
<script>document.getElementById('trap').addEventListener('keydown', (e) => { if (e.key === 'Tab') e.preventDefault(); });</script>
</body></html>`

// A page whose tabindex reorders its buttons: Tab meets the third before
// the first.
const orderPage = `<!doctype html><html lang="en"><head><title>Order</title><style>
:focus-visible { outline: 3px solid #1a5fb4; }
</style></head><body>
<button type="button" id="first" tabindex="2">First</button>
<button type="button" id="second">Second</button>
<button type="button" id="third" tabindex="1">Third</button>
</body></html>`

func TestTheKeyboardWalkFindsWhatAPersonWouldMeet(t *testing.T) {
	bin := browsertest.Chromium(t, "the keyboard walk")
	var others atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/good":
			_, _ = w.Write([]byte(goodPage))
		case "/bad":
			_, _ = w.Write([]byte(badPage))
		case "/order":
			_, _ = w.Write([]byte(orderPage))
		case "/favicon.ico":
			http.NotFound(w, r)
		default:
			others.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	browser := browsertest.New(t, bin, 30*time.Second)

	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/good"), chromedp.WaitReady(`body`)))
	problems, controls, err := browsertest.KeyboardProblems(browser)
	require.NoError(t, err)
	require.Empty(t, problems)
	require.Equal(t, 7, controls, "the link, the field, the box, the checked radio button, the select, the button and the summary")
	location, err := chromedp.Run(browser, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, srv.URL+"/good", location, "no link followed")
	ticked, err := chromedp.Run(browser, chromedp.Evaluate[bool](`document.querySelector('[name=c]').checked || document.querySelector('details').open`))
	require.NoError(t, err)
	require.False(t, ticked, "no box ticked, no details opened")
	require.Zero(t, others.Load(), "nothing sent, nothing followed")

	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/bad"), chromedp.WaitReady(`body`)))
	problems, _, err = browsertest.KeyboardProblems(browser)
	require.NoError(t, err)
	all := strings.Join(problems, "\n")
	for _, want := range []string{
		`a "Faint ring": its focus outline has a contrast of`,
		`button "No ring": no visible focus indicator`,
		`span#fake "Fake button": Enter does not activate it`,
		`span#fake "Fake button": Space does not activate it`,
		`input#jumps has tabindex 3, which takes it out of the page's order`,
		`button#after "After the trap" is never reached with Tab`,
	} {
		require.Contains(t, all, want)
	}
	require.NotContains(t, all, "input#trap: ", "the trap itself shows its focus")

	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/order"), chromedp.WaitReady(`body`)))
	problems, _, err = browsertest.KeyboardProblems(browser)
	require.NoError(t, err)
	require.Equal(t, []string{`button#first "First" is reached after button#third "Third", which comes after it on the page`,
		`button#first "First" has tabindex 2, which takes it out of the page's order`,
		`button#third "Third" has tabindex 1, which takes it out of the page's order`}, problems)
	require.Zero(t, others.Load())
}
