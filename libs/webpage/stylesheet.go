package webpage

import (
	_ "embed"
	"slices"
)

// StylesheetFile is the name under which every site serves Stylesheet,
// beside its own static files; each page links it before its site's own
// sheet, which keeps only what is the site's.
const StylesheetFile = "pcourt.css"

// BaseStylesheet is the base of the design system (static/base.css):
// colours as variables with a dark scheme, type, spacing, tables, facts,
// badges and notices. Every page is drawn with it, and the award's html
// artifact carries it inline: an artifact loads nothing, and a change of
// these bytes is a new look of every award issued after it.
//
//go:embed static/base.css
var BaseStylesheet []byte

//go:embed static/pages.css
var pagesStylesheet []byte

// Stylesheet is the pages' one design system: BaseStylesheet, then what
// only the pages that act have (static/pages.css: forms, progress bars,
// who is signed in, charts). It needs no build and no network, and
// passes the pages' CSP (style-src 'self').
var Stylesheet = slices.Concat(BaseStylesheet, pagesStylesheet)
