package problem

import "unicode/utf8"

// EchoLimit bounds, in bytes, any piece of caller input (a path, a header
// value, a field name) that a problem detail or a log line repeats back.
// Without it a 900 KB path is copied into the body and into every log that
// records the request.
const EchoLimit = 256

// detailLimit bounds a whole detail, as a backstop for details built from
// several echoed pieces.
const detailLimit = 1024

const ellipsis = "…"

// Clip returns s cut to at most EchoLimit bytes, on a UTF-8 boundary, ending
// in an ellipsis when it was cut.
func Clip(s string) string { return clipTo(s, EchoLimit) }

func clipTo(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
