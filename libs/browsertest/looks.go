package browsertest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"image"
	"image/color/palette"
	"image/draw"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Look is one way a person sees a page: a viewport width and a colour
// scheme.
type Look struct {
	Width  int64
	Dark   bool
	height int64
	// keyboard: EachLook walks the page with the keyboard in this look.
	keyboard bool
}

// Name is the look as a file name's suffix: "1280-light", "375-dark".
func (l Look) Name() string {
	scheme := "light"
	if l.Dark {
		scheme = "dark"
	}
	return fmt.Sprintf("%d-%s", l.Width, scheme)
}

// Looks are the four every page is checked in: a desktop and a phone
// (375 px, the narrowest common one), each light and dark. The keyboard
// walk takes two of them, the desktop in light and the phone in dark:
// both widths and both schemes, at half the keys.
var Looks = []Look{{Width: 1280, height: 800, keyboard: true}, {Width: 375, height: 812}, {Width: 1280, Dark: true, height: 800},
	{Width: 375, Dark: true, height: 812, keyboard: true}}

// auditScript lists what a person would trip over on the page as it is
// rendered (audit.js): a page wider than the viewport, an interactive
// element without an accessible name, text under 4.5:1 of contrast (3:1
// for large text) against the background it is drawn on.
//
//go:embed audit.js
var auditScript string

// EachLook shows the page the browser is on in every look: it sets the
// viewport and the colour scheme, checks the page (Audit, and in two of
// the looks KeyboardWalk) and calls shoot (a screenshot, say) with the
// look, then puts the first look back.
func EachLook(t *testing.T, browser context.Context, page string, shoot func(Look)) {
	t.Helper()
	for _, l := range Looks {
		show(t, browser, l)
		Audit(t, browser, page+" at "+l.Name())
		if l.keyboard {
			KeyboardWalk(t, browser, page+" at "+l.Name())
		}
		if shoot != nil {
			shoot(l)
		}
	}
	show(t, browser, Looks[0])
}

func show(t *testing.T, browser context.Context, l Look) {
	t.Helper()
	scheme := "light"
	if l.Dark {
		scheme = "dark"
	}
	err := chromedp.Do(browser, chromedp.EmulateViewport(l.Width, l.height), chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	}))
	if err != nil {
		t.Fatalf("showing the page at %s: %v", l.Name(), err)
	}
}

// Audit fails the test with every problem audit.js finds on the page.
func Audit(t *testing.T, browser context.Context, page string) {
	t.Helper()
	problems, err := chromedp.Run(browser, chromedp.Evaluate[[]string](auditScript))
	if err != nil {
		t.Fatalf("auditing %s: %v", page, err)
	}
	if len(problems) > 0 {
		t.Errorf("%s: %d problems a person would meet:\n  %s", page, len(problems), strings.Join(problems, "\n  "))
	}
}

// SavePNG writes a screenshot to file re-encoded with Plan 9's palette
// (its many greys keep the dark scheme's backgrounds close) and the best
// compression: a page of text and flat colours loses little, and the file
// is a third of its size.
func SavePNG(t *testing.T, shot []byte, file string) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("decoding a screenshot: %v", err)
	}
	pal := image.NewPaletted(img.Bounds(), palette.Plan9)
	draw.Draw(pal, img.Bounds(), img, img.Bounds().Min, draw.Src)
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, pal); err != nil {
		t.Fatalf("encoding %s: %v", file, err)
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatalf("writing %s: %v", file, err)
	}
}
