package exhibitfile

import (
	"net/http"

	"github.com/pcourt/pcourt/libs/refusal"
)

// Code is the stable code of a refused upload. The HTTP layer turns it into
// a problem+json answer; Status gives the status it should carry.
type Code string

// The refusal codes, in the order Take checks them. The name is checked
// before a byte is read; the stream's outcome next (a cut-off body, then a
// body over the limit, then an empty one); the content last, on the whole
// spooled file: an archive, a type not accepted, content that is not the
// declared type, a second format hidden in the file, a file that does not
// parse as its type.
const (
	CodeNameInvalid      Code = "exhibit_name_invalid"      // 422
	CodeUploadIncomplete Code = "exhibit_upload_incomplete" // 400
	CodeTooLarge         Code = "exhibit_too_large"         // 413
	CodeEmpty            Code = "exhibit_empty"             // 422
	CodeArchiveRefused   Code = "exhibit_archive_refused"   // 415
	CodeTypeNotAllowed   Code = "exhibit_type_not_allowed"  // 415
	CodeTypeMismatch     Code = "exhibit_type_mismatch"     // 415
	CodePolyglot         Code = "exhibit_polyglot"          // 422
	CodeContentInvalid   Code = "exhibit_content_invalid"   // 422
)

// Codes lists every refusal code in check order, for the HTTP layer's
// mapping, the docs and tests.
var Codes = []Code{
	CodeNameInvalid, CodeUploadIncomplete, CodeTooLarge, CodeEmpty, CodeArchiveRefused,
	CodeTypeNotAllowed, CodeTypeMismatch, CodePolyglot, CodeContentInvalid,
}

// Status is the HTTP status a refusal with this code should answer with: 413
// for a file over the limit, 415 for a type refused (archives included), 400
// for a body cut off midway (the request itself is broken), 422 for the rest
// (the request is whole but its file is not acceptable). It is a hint the
// HTTP layer may follow; this package writes no HTTP.
func (c Code) Status() int {
	switch c {
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeArchiveRefused, CodeTypeNotAllowed, CodeTypeMismatch:
		return http.StatusUnsupportedMediaType
	case CodeUploadIncomplete:
		return http.StatusBadRequest
	default:
		return http.StatusUnprocessableEntity
	}
}

// Refusal is a refused upload: nothing of it is kept. Detail is safe to show
// the uploader; it names what was wrong, never a path on this machine. It
// matches any refusal with the same code:
// errors.Is(err, &exhibitfile.Refusal{Code: exhibitfile.CodeTooLarge}).
type Refusal = refusal.Error[Code]

func refuse(code Code, format string, args ...any) *Refusal {
	return refusal.New(code, format, args...)
}
