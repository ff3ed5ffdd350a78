package exhibitfile

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameBytes is the longest file name accepted, in bytes.
const MaxNameBytes = 200

// checkName refuses a file name that could not be shown, stored or offered
// for download as it is. The name is a label: it is never used as a path
// here, but a download's Content-Disposition and a partner's disk will use
// it, so a name that could climb out of a folder, hide from a listing or
// lie about its extension is refused rather than cleaned, and the uploader
// learns why.
//
// In order: empty (or only spaces), over MaxNameBytes, not valid UTF-8, a
// path separator (/ or \), a leading dot (".", ".." and hidden files), a
// control character (C0, DEL, C1), a bidirectional control (U+202E turns
// "gpj.exe" into what reads as "exe.jpg"). A ".." inside a name ("v1..v2.txt")
// is harmless once separators and a leading dot are refused, and is kept.
func checkName(name string) *Refusal {
	switch {
	case strings.TrimSpace(name) == "":
		return refuse(CodeNameInvalid, "the file name is empty")
	case len(name) > MaxNameBytes:
		return refuse(CodeNameInvalid, "the file name is %d bytes long, the limit is %d", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return refuse(CodeNameInvalid, "the file name is not valid UTF-8")
	case strings.ContainsAny(name, `/\`):
		return refuse(CodeNameInvalid, "the file name contains a path separator")
	case strings.HasPrefix(name, "."):
		return refuse(CodeNameInvalid, "the file name starts with a dot")
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return refuse(CodeNameInvalid, "the file name contains the control character %U", r)
		}
		if isBidiControl(r) {
			return refuse(CodeNameInvalid, "the file name contains the bidirectional control %U", r)
		}
	}
	return nil
}

// isBidiControl reports the explicit directional marks, embeddings,
// overrides and isolates of Unicode's bidirectional algorithm.
func isBidiControl(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case r >= 0x202A && r <= 0x202E:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
