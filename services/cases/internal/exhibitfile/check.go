package exhibitfile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
)

// headSize is how much of the file's start the sniffing, the archive check
// and the markup check look at: http.DetectContentType reads 512 bytes, a
// PDF's header may sit within the first 1024, tar's magic sits at 257.
const headSize = 1024

// check decides the file's media type and refuses a file that is not a
// well-formed file of it, in this order:
//
//  1. exhibit_archive_refused: the file starts as an archive or compressed
//     stream (zip and the formats built on it: jar, docx, odt, epub, apk;
//     gzip, bzip2, xz, zstd, 7z, rar, tar, cab, ar), whatever was declared.
//  2. exhibit_type_not_allowed: the declared type (or the standard type it
//     is an alias of: image/jpg, text/x-csv, ...) is not on the allowlist, a
//     text type declares a charset other than UTF-8 (or US-ASCII, its
//     subset), or, when the declaration defers to sniffing (no type, or
//     application/octet-stream: browsers send it for any extension they do
//     not know), the sniffed type is not on it.
//  3. exhibit_type_mismatch: the content is not of the declared type. The
//     text types (text/plain, text/csv, application/json) accept any
//     content http.DetectContentType calls UTF-8 text, markup included: a
//     text/plain file holding HTML is text, stored as text/plain and never
//     rendered; an image/png whose content is HTML is a mismatch.
//  4. exhibit_polyglot and exhibit_content_invalid: the type's own check
//     (checkPDF, checkPNG, checkJPEG, checkText). For the binary types, two
//     signs of a second format come first and refuse as polyglot: a ZIP end
//     record in the file's last 64 KiB (a PDF, PNG or JPEG that is also a
//     zip or jar: the GIFAR trick), and markup (<script, <html, ...) in the
//     first 1024 bytes, which a browser sniffing the file would run. Then
//     the walk of the format: a file that does not parse is invalid, one
//     that parses but carries bytes after its end is a polyglot.
func check(f *os.File, size int64, declared string, p Policy) (MediaType, error) {
	head := make([]byte, min(size, headSize))
	if _, err := f.ReadAt(head, 0); err != nil {
		return "", fmt.Errorf("reading spool file: %w", err)
	}
	if kind := archiveKind(head); kind != "" {
		return "", refuse(CodeArchiveRefused, "the file is a %s archive; archives are not accepted, upload each file on its own", kind)
	}
	t, ref := mediaType(head, declared, p)
	if ref != nil {
		return "", ref
	}
	if !t.isText() {
		if ref, err := checkSecondFormat(f, size, head, t); ref != nil || err != nil {
			return "", orRefusal(ref, err)
		}
	}
	var err error
	switch t {
	case PDF:
		ref, err = checkPDF(f, size, head)
	case PNG:
		ref, err = checkPNG(f, size)
	case JPEG:
		ref, err = checkJPEG(f, size)
	default:
		ref, err = checkText(f, size, t)
	}
	if ref != nil || err != nil {
		return "", orRefusal(ref, err)
	}
	return t, nil
}

// orRefusal keeps a nil *Refusal from becoming a non-nil error.
func orRefusal(ref *Refusal, err error) error {
	if err != nil {
		return err
	}
	return ref
}

// mediaType is the type the file is taken as: the declared one when it is
// concrete and the content agrees, the sniffed one when the declaration
// defers to sniffing.
func mediaType(head []byte, declared string, p Policy) (MediaType, *Refusal) {
	sniffed, textual := sniff(head)
	declared = strings.TrimSpace(declared)
	var d string
	var params map[string]string
	if declared != "" {
		var err error
		if d, params, err = mime.ParseMediaType(declared); err != nil {
			return "", refuse(CodeTypeNotAllowed, "the declared Content-Type %q does not parse", declared)
		}
	}
	if d == "" || d == "application/octet-stream" {
		t := MediaType(sniffed)
		if !p.allows(t) {
			return "", refuse(CodeTypeNotAllowed, "the content is %s, which is not accepted; accepted: %s", sniffed, list(p.Allowed))
		}
		return t, nil
	}
	t := MediaType(d)
	if alias, ok := aliases[d]; ok {
		t = alias
	}
	if !p.allows(t) {
		return "", refuse(CodeTypeNotAllowed, "%s is not accepted; accepted: %s", d, list(p.Allowed))
	}
	if cs, ok := params["charset"]; ok && t.isText() && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "us-ascii") {
		return "", refuse(CodeTypeNotAllowed, "text must be UTF-8, the declared charset is %s", cs)
	}
	if t.isText() && !textual || !t.isText() && MediaType(sniffed) != t {
		return "", refuse(CodeTypeMismatch, "the file was declared %s but its content is %s", d, sniffed)
	}
	return t, nil
}

// aliases are names clients still send for the accepted types (old
// browsers, operating systems' type tables); the file is stored under the
// standard name.
var aliases = map[string]MediaType{
	"application/x-pdf":           PDF,
	"image/x-png":                 PNG,
	"image/jpg":                   JPEG,
	"image/pjpeg":                 JPEG,
	"text/x-csv":                  CSV,
	"application/csv":             CSV,
	"text/comma-separated-values": CSV,
	"text/json":                   JSON,
}

// sniff is the content's media type by its first bytes (without
// parameters), as net/http.DetectContentType sees it: a PDF, PNG or JPEG
// by its signature, text when the head holds no binary bytes. textual
// reports UTF-8 text of any text/* kind (plain, HTML, XML); UTF-16 text is
// text/plain but not textual, and so refused.
func sniff(head []byte) (mediaType string, textual bool) {
	ct := http.DetectContentType(head)
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "application/octet-stream", false
	}
	textual = strings.HasPrefix(mt, "text/") && strings.EqualFold(params["charset"], "utf-8")
	if mt == "text/plain" && !textual {
		mt = "text/plain; charset=" + params["charset"]
	}
	return mt, textual
}

// list is the allowlist for a refusal's detail.
func list(ts []MediaType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// archiveMagic are the signatures of archive and compressed formats at
// offset 0 (tar's at 257, checked apart).
var archiveMagic = []struct {
	kind  string
	magic string
}{
	{"zip", "PK\x03\x04"},
	{"zip", "PK\x05\x06"}, // an empty zip is its end record alone
	{"zip", "PK\x07\x08"}, // a spanned zip
	{"gzip", "\x1f\x8b"},
	{"xz", "\xfd7zXZ\x00"},
	{"zstd", "\x28\xb5\x2f\xfd"},
	{"7z", "7z\xbc\xaf\x27\x1c"},
	{"rar", "Rar!\x1a\x07"},
	{"cab", "MSCF\x00\x00\x00\x00"},
	{"ar", "!<arch>\n"},
}

// archiveKind names the archive format head starts with, or "".
func archiveKind(head []byte) string {
	for _, m := range archiveMagic {
		if bytes.HasPrefix(head, []byte(m.magic)) {
			return m.kind
		}
	}
	// bzip2: "BZh", the block size digit, then the block magic (π's digits).
	if len(head) >= 10 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9' &&
		(bytes.Equal(head[4:10], []byte("1AY&SY")) || bytes.Equal(head[4:10], []byte("\x17\x72\x45\x38\x50\x90"))) {
		return "bzip2"
	}
	// tar: the POSIX or the GNU magic, both ending in a NUL no text holds.
	if len(head) >= 265 && (bytes.Equal(head[257:263], []byte("ustar\x00")) || bytes.Equal(head[257:265], []byte("ustar  \x00"))) {
		return "tar"
	}
	return ""
}

// zipTail is how far from the end a ZIP end-of-central-directory record can
// start: its 22 bytes and a comment of up to 65535.
const zipTail = 22 + 65535

// markup are the starts of HTML, SVG and PHP a browser or server would act
// on if it sniffed a file; none belongs in the first bytes of a PDF or an
// image.
var markup = []string{"<script", "<html", "<!doctype", "<head", "<body", "<iframe", "<svg", "<?php"}

// checkSecondFormat refuses a PDF, PNG or JPEG that carries a second format
// readers look for: a ZIP end record (the ZIP and ZIP64 record signatures)
// in the last 64 KiB, or markup in the head. A random 4-byte match in
// compressed image data is possible (about 1 in 65,000 files), and is
// refused too: the uploader converts the file again.
func checkSecondFormat(f *os.File, size int64, head []byte, t MediaType) (*Refusal, error) {
	lower := bytes.ToLower(head)
	for _, m := range markup {
		if bytes.Contains(lower, []byte(m)) {
			return refuse(CodePolyglot, "the %s holds markup (%s) in its first bytes", t.label(), m), nil
		}
	}
	start := max(0, size-zipTail)
	tail := make([]byte, size-start)
	if _, err := f.ReadAt(tail, start); err != nil {
		return nil, fmt.Errorf("reading spool file: %w", err)
	}
	for _, sig := range []string{"PK\x05\x06", "PK\x06\x06", "PK\x06\x07"} {
		if bytes.Contains(tail, []byte(sig)) {
			return refuse(CodePolyglot, "the %s is also a ZIP archive", t.label()), nil
		}
	}
	return nil, nil
}

// reader streams the spool file from off through one bufferSize buffer.
func reader(f *os.File, off, size int64) *bufio.Reader {
	return bufio.NewReaderSize(io.NewSectionReader(f, off, size-off), bufferSize)
}
