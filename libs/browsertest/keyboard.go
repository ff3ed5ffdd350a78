package browsertest

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// keyboardScript is the keyboard walk's side in the page (keyboard.js):
// the controls Tab should reach, in order, where focus is after each Tab
// and how it shows, and a catch of every click.
//
//go:embed keyboard.js
var keyboardScript string

// focusStep is where focus went after one Tab.
type focusStep struct {
	Index   int    `json:"index"` // in the page's controls; -1 another element, -2 the page itself
	What    string `json:"what"`
	Kind    string `json:"kind"` // link, button, summary, checkbox, radio, file or field
	Problem string `json:"problem"`
}

// activationKeys are the keys a person presses to use a focused control of
// a kind: Enter follows a link and opens a summary; Enter and Space press a
// button; Space ticks a box and opens a file picker. Fields (text, select)
// are used by typing, and a group of radio buttons with the arrow keys:
// the browser's own, not activated.
var activationKeys = map[string][]string{
	"link": {"\r"}, "summary": {"\r"}, "button": {"\r", " "}, "checkbox": {" "}, "file": {" "},
}

var keyNames = map[string]string{"\r": "Enter", " ": "Space"}

// KeyboardWalk tabs through the page the browser shows, from its top, as
// a person without a mouse does, and fails the test with what they would
// meet (KeyboardProblems).
func KeyboardWalk(t *testing.T, browser context.Context, page string) {
	t.Helper()
	problems, controls, err := KeyboardProblems(browser)
	if err != nil {
		t.Fatalf("walking %s with the keyboard: %v", page, err)
	}
	if len(problems) > 0 {
		t.Errorf("%s: %d problems a person using the keyboard would meet (of %d controls):\n  %s", page, len(problems), controls, strings.Join(problems, "\n  "))
	}
}

// KeyboardProblems tabs through the page the browser shows, from its top,
// and lists what a person using the keyboard would meet: a control Tab
// never reaches, controls reached out of the page's order (or taken out of
// it by a positive tabindex), a control that does not show it has focus
// (its outline and box shadow unchanged, or an outline under 3:1 against
// what surrounds it), and a link, button, summary, box or file picker its
// key does not activate. Activating is checked by the click the key makes
// reach the control; the walk catches every click, so no form is sent and
// no link followed, and the page is as it was when the walk ends.
// controls is how many controls the page has for Tab.
func KeyboardProblems(browser context.Context) (problems []string, controls int, err error) {
	if _, err := chromedp.Run(browser, chromedp.Evaluate[bool](keyboardScript)); err != nil {
		return nil, 0, err
	}
	names, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`window.__pcKeyboard.begin()`))
	if err != nil {
		return nil, 0, err
	}
	reached := make([]bool, len(names))
	last, wrapped, previous := -1, false, -3
	// A date and time field takes a Tab for each of its parts: the budget
	// allows for them.
	for range 8*len(names) + 20 {
		if err := chromedp.Do(browser, chromedp.KeyEvent(kb.Tab)); err != nil {
			return nil, 0, err
		}
		st, err := chromedp.Run(browser, chromedp.Evaluate[focusStep](`window.__pcKeyboard.step()`))
		if err != nil {
			return nil, 0, err
		}
		if st.Index == -2 && !wrapped {
			// The walk starts at the end of the page, so the first Tab
			// leaves it and the next comes in at the first control, as on
			// a page just loaded.
			wrapped = true
			continue
		}
		if st.Index >= 0 && st.Index == previous {
			continue // Tab moved within the control (the parts of a date)
		}
		previous = st.Index
		if st.Index == -2 || (st.Index >= 0 && reached[st.Index]) {
			break // round the page once: every control Tab reaches is reached
		}
		if st.Index >= 0 {
			if st.Index < last {
				problems = append(problems, fmt.Sprintf("%s is reached after %s, which comes after it on the page", st.What, names[last]))
			}
			reached[st.Index], last = true, max(last, st.Index)
		}
		if st.Problem != "" {
			problems = append(problems, st.What+": "+st.Problem)
		}
		for _, key := range activationKeys[st.Kind] {
			if err := chromedp.Do(browser, chromedp.KeyEvent(key)); err != nil {
				return nil, 0, err
			}
			hit, err := chromedp.Run(browser, chromedp.Evaluate[bool](`window.__pcKeyboard.activated()`))
			if err != nil {
				return nil, 0, err
			}
			if !hit {
				problems = append(problems, fmt.Sprintf("%s: %s does not activate it", st.What, keyNames[key]))
			}
		}
	}
	for i, ok := range reached {
		if !ok {
			problems = append(problems, names[i]+" is never reached with Tab")
		}
	}
	more, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`window.__pcKeyboard.end()`))
	if err != nil {
		return nil, 0, err
	}
	return append(problems, more...), len(names), nil
}
