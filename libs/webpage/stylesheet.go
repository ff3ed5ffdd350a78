package webpage

import _ "embed"

// StylesheetFile is the name under which every site serves Stylesheet,
// beside its own static files; each page links it before its site's own
// sheet, which keeps only what is the site's.
const StylesheetFile = "pcourt.css"

// Stylesheet is the pages' one design system (static/pcourt.css):
// typography, spacing, colours with a dark scheme, tables that scroll on
// a narrow screen, progress bars, badges, notices, empty states and form
// errors. It
// needs no build and no network, and passes the pages' CSP (style-src
// 'self').
//
//go:embed static/pcourt.css
var Stylesheet []byte
