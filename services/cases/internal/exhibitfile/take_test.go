package exhibitfile_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/exhibitfile"
)

const limit = 64 << 10

func policy() exhibitfile.Policy {
	return exhibitfile.Policy{MaxFileBytes: limit, Allowed: exhibitfile.DefaultAllowed()}
}

// requireEmpty holds the spool directory to "nothing is kept".
func requireEmpty(t testing.TB, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the spool directory must be empty")
}

// failingReader gives data and then fails, as a client that hangs up.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestTakeRefusesTheMaliciousCorpusAndKeepsNothing(t *testing.T) {
	text := []byte("A plain statement.\n")
	png := pngFile(t)
	jpg := jpegFile(t)
	pdf := pdfFile(t)
	zipped := zipFile(t, "a.txt", "b.txt")

	tests := []struct {
		name     string
		body     io.Reader
		declared string
		fileName string
		policy   func(*exhibitfile.Policy)
		want     exhibitfile.Code
	}{
		// The name, checked before a byte is read.
		{name: "empty name", fileName: "", want: exhibitfile.CodeNameInvalid},
		{name: "spaces only", fileName: "   ", want: exhibitfile.CodeNameInvalid},
		{name: "slash", fileName: "evidence/contract.pdf", want: exhibitfile.CodeNameInvalid},
		{name: "backslash", fileName: `evidence\contract.pdf`, want: exhibitfile.CodeNameInvalid},
		{name: "climbing out", fileName: "../../etc/passwd", want: exhibitfile.CodeNameInvalid},
		{name: "dot dot", fileName: "..", want: exhibitfile.CodeNameInvalid},
		{name: "hidden", fileName: ".htaccess", want: exhibitfile.CodeNameInvalid},
		{name: "NUL", fileName: "contract.pdf\x00.txt", want: exhibitfile.CodeNameInvalid},
		{name: "newline", fileName: "contract\n.pdf", want: exhibitfile.CodeNameInvalid},
		{name: "DEL", fileName: "contract\x7f.pdf", want: exhibitfile.CodeNameInvalid},
		{name: "not UTF-8", fileName: "contract\xff.pdf", want: exhibitfile.CodeNameInvalid},
		{name: "right-to-left override", fileName: "invoice\u202efdp.exe", want: exhibitfile.CodeNameInvalid},
		{name: "over 200 bytes", fileName: strings.Repeat("a", 197) + ".txt", want: exhibitfile.CodeNameInvalid},

		// The stream.
		{name: "cut off midway", body: &failingReader{data: text, err: io.ErrUnexpectedEOF}, declared: "text/plain", want: exhibitfile.CodeUploadIncomplete},
		{name: "reader fails", body: &failingReader{data: bytes.Repeat(text, 100), err: errors.New("connection reset")}, declared: "text/plain", want: exhibitfile.CodeUploadIncomplete},
		{name: "one byte over the limit", body: bytes.NewReader(bytes.Repeat([]byte("a"), limit+1)), declared: "text/plain", want: exhibitfile.CodeTooLarge},
		{name: "over the limit, then cut off", body: &failingReader{data: bytes.Repeat([]byte("a"), 2*limit), err: io.ErrUnexpectedEOF}, declared: "text/plain", want: exhibitfile.CodeTooLarge},
		{name: "the server's body limit", body: http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader(bytes.Repeat(text, 100))), 100), declared: "text/plain", want: exhibitfile.CodeTooLarge},
		{name: "zero bytes", body: bytes.NewReader(nil), declared: "application/pdf", want: exhibitfile.CodeEmpty},

		// Archives, whatever they are declared as.
		{name: "zip", body: bytes.NewReader(zipped), declared: "application/zip", want: exhibitfile.CodeArchiveRefused},
		{name: "zip declared as a PDF", body: bytes.NewReader(zipped), declared: "application/pdf", want: exhibitfile.CodeArchiveRefused},
		{name: "docx (a zip)", body: bytes.NewReader(zipFile(t, "[Content_Types].xml", "word/document.xml")), declared: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", want: exhibitfile.CodeArchiveRefused},
		{name: "empty zip", body: strings.NewReader("PK\x05\x06" + strings.Repeat("\x00", 18)), declared: "application/octet-stream", want: exhibitfile.CodeArchiveRefused},
		{name: "gzip", body: bytes.NewReader(gzipFile(t)), declared: "application/gzip", want: exhibitfile.CodeArchiveRefused},
		{name: "gzip declared as text", body: bytes.NewReader(gzipFile(t)), declared: "text/plain", want: exhibitfile.CodeArchiveRefused},
		{name: "tar", body: bytes.NewReader(tarFile(t)), declared: "application/x-tar", want: exhibitfile.CodeArchiveRefused},
		{name: "rar", body: strings.NewReader("Rar!\x1a\x07\x01\x00rest"), declared: "application/vnd.rar", want: exhibitfile.CodeArchiveRefused},
		{name: "7z", body: strings.NewReader("7z\xbc\xaf\x27\x1c\x00\x04rest"), declared: "application/x-7z-compressed", want: exhibitfile.CodeArchiveRefused},

		// Types.
		{name: "declared type not on the allowlist", body: bytes.NewReader(png), declared: "video/mp4", want: exhibitfile.CodeTypeNotAllowed},
		{name: "declared type does not parse", body: bytes.NewReader(png), declared: "image/", want: exhibitfile.CodeTypeNotAllowed},
		{name: "text in another charset", body: bytes.NewReader(text), declared: "text/plain; charset=iso-8859-1", want: exhibitfile.CodeTypeNotAllowed},
		{name: "octet-stream sniffed as GIF", body: bytes.NewReader(gifFile(t)), declared: "application/octet-stream", want: exhibitfile.CodeTypeNotAllowed},
		{name: "undeclared HTML", body: strings.NewReader("<!DOCTYPE html><script>alert(1)</script>"), declared: "", want: exhibitfile.CodeTypeNotAllowed},
		{name: "a PNG where only PDFs are allowed", body: bytes.NewReader(png), declared: "image/png",
			policy: func(p *exhibitfile.Policy) { p.Allowed = []exhibitfile.MediaType{exhibitfile.PDF} }, want: exhibitfile.CodeTypeNotAllowed},
		{name: "PNG declared as PDF", body: bytes.NewReader(png), declared: "application/pdf", want: exhibitfile.CodeTypeMismatch},
		{name: "HTML declared as PNG", body: strings.NewReader("<html><body><script>alert(1)</script></body></html>"), declared: "image/png", want: exhibitfile.CodeTypeMismatch},
		{name: "PDF declared as text", body: bytes.NewReader(pdf), declared: "text/plain", want: exhibitfile.CodeTypeMismatch},
		{name: "JPEG declared as PNG", body: bytes.NewReader(jpg), declared: "image/png", want: exhibitfile.CodeTypeMismatch},
		{name: "binary declared as JSON", body: bytes.NewReader([]byte{0x00, 0x01, 0x02, '{', '}'}), declared: "application/json", want: exhibitfile.CodeTypeMismatch},
		{name: "UTF-16 text", body: strings.NewReader("\xfe\xff\x00h\x00i"), declared: "text/plain", want: exhibitfile.CodeTypeMismatch},

		// Polyglots: a second format in an accepted one.
		{name: "PDF with a zip appended", body: bytes.NewReader(cat(pdf, zipped)), declared: "application/pdf", want: exhibitfile.CodePolyglot},
		{name: "PNG with a zip after IEND", body: bytes.NewReader(cat(png, zipped)), declared: "image/png", want: exhibitfile.CodePolyglot},
		{name: "JPEG with a jar appended (GIFAR's trick)", body: bytes.NewReader(cat(jpg, zipFile(t, "META-INF/MANIFEST.MF", "Evil.class"))), declared: "image/jpeg", want: exhibitfile.CodePolyglot},
		{name: "PNG with bytes after IEND", body: bytes.NewReader(cat(png, []byte("a second file"))), declared: "image/png", want: exhibitfile.CodePolyglot},
		{name: "JPEG with trailing data", body: bytes.NewReader(cat(jpg, []byte("trailing payload"))), declared: "image/jpeg", want: exhibitfile.CodePolyglot},
		{name: "JPEG with too much padding", body: bytes.NewReader(cat(jpg, make([]byte, 2048))), declared: "image/jpeg", want: exhibitfile.CodePolyglot},
		{name: "PDF with bytes after %%EOF", body: bytes.NewReader(cat(pdf, []byte("a second file"))), declared: "application/pdf", want: exhibitfile.CodePolyglot},
		{name: "PDF with a script in its head", body: bytes.NewReader(pdfWithHead(t, "<script>alert(1)</script>")), declared: "application/pdf", want: exhibitfile.CodePolyglot},
		{name: "PNG with HTML in an early chunk", body: bytes.NewReader(pngWithChunkAfterIHDR(t, pngChunk("tEXt", []byte("Comment\x00<html><script>alert(1)</script>")))), declared: "image/png", want: exhibitfile.CodePolyglot},

		// Files that do not parse as their type.
		{name: "PDF without %%EOF", body: bytes.NewReader(pdf[:len(pdf)-7]), declared: "application/pdf", want: exhibitfile.CodeContentInvalid},
		{name: "PDF header without a version", body: strings.NewReader("%PDF-x\n%%EOF\n"), declared: "application/pdf", want: exhibitfile.CodeContentInvalid},
		{name: "PNG cut short", body: bytes.NewReader(png[:len(png)-20]), declared: "image/png", want: exhibitfile.CodeContentInvalid},
		{name: "PNG with a bad CRC", body: bytes.NewReader(func() []byte { p := bytes.Clone(png); p[30] ^= 0xff; return p }()), declared: "image/png", want: exhibitfile.CodeContentInvalid},
		{name: "PNG without image data", body: bytes.NewReader(cat(png[:33], pngChunk("IEND", nil))), declared: "image/png", want: exhibitfile.CodeContentInvalid},
		{name: "JPEG with no image", body: strings.NewReader("\xff\xd8\xff\xe0\x00\x04ab\xff\xd9"), declared: "image/jpeg", want: exhibitfile.CodeContentInvalid},
		{name: "text with a bad byte after the first read", body: strings.NewReader(strings.Repeat("a", 40000) + "\xc3(" + "tail"), declared: "text/plain", want: exhibitfile.CodeContentInvalid},
		{name: "JPEG cut short", body: bytes.NewReader(jpg[:len(jpg)/2]), declared: "image/jpeg", want: exhibitfile.CodeContentInvalid},
		{name: "text with a NUL after the sniffed head", body: bytes.NewReader(cat(bytes.Repeat([]byte("words "), 200), []byte{0}, text)), declared: "text/plain", want: exhibitfile.CodeContentInvalid},
		{name: "text that is not UTF-8", body: strings.NewReader("caf\xe9 au lait"), declared: "text/plain", want: exhibitfile.CodeContentInvalid},
		{name: "JSON that does not parse", body: strings.NewReader(`{"claim": 40,}`), declared: "application/json", want: exhibitfile.CodeContentInvalid},
		{name: "two JSON values", body: strings.NewReader(`{} {}`), declared: "application/json", want: exhibitfile.CodeContentInvalid},
		{name: "CSV with a short row", body: strings.NewReader("date,amount\n2026-01-02,40\n2026-01-03\n"), declared: "text/csv", want: exhibitfile.CodeContentInvalid},
		{name: "CSV with a bare quote", body: strings.NewReader("date,amount\n2026-01-02,4\"0\n"), declared: "text/csv", want: exhibitfile.CodeContentInvalid},
		{name: "CSV with an open quote", body: strings.NewReader("date,note\n2026-01-02,\"never closed\n"), declared: "text/csv", want: exhibitfile.CodeContentInvalid},
	}
	seen := map[exhibitfile.Code]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := policy()
			if tt.policy != nil {
				tt.policy(&p)
			}
			body, name := tt.body, tt.fileName
			if body == nil {
				body = bytes.NewReader(text)
			}
			if name == "" && tt.want != exhibitfile.CodeNameInvalid {
				name = "exhibit-1"
			}
			f, err := exhibitfile.Take(dir, body, tt.declared, name, p)
			require.Nil(t, f)
			var ref *exhibitfile.Refusal
			require.ErrorAs(t, err, &ref)
			require.Equal(t, tt.want, ref.Code, "detail: %s", ref.Detail)
			require.NotEmpty(t, ref.Detail)
			require.NotContains(t, ref.Detail, dir, "a refusal never names a path on this machine")
			requireEmpty(t, dir)
			seen[ref.Code] = true
		})
	}
	for _, c := range exhibitfile.Codes {
		require.True(t, seen[c], "the corpus has no case for %s", c)
	}
}

func TestTakeAcceptsWellFormedFilesAndHandsThemOnWhole(t *testing.T) {
	tests := []struct {
		name     string
		body     []byte
		declared string
		fileName string
		want     exhibitfile.MediaType
	}{
		{name: "PDF", body: pdfFile(t), declared: "application/pdf", want: exhibitfile.PDF},
		{name: "PDF from a real writer", body: fpdfFile(t, true, "Page one", "Page two"), declared: "application/pdf", want: exhibitfile.PDF},
		{name: "PDF declared as octet-stream", body: pdfFile(t), declared: "application/octet-stream", want: exhibitfile.PDF},
		{name: "PDF with trailing white space", body: cat(pdfFile(t), []byte("\r\n\n  ")), declared: "application/pdf", want: exhibitfile.PDF},
		{name: "PNG", body: pngFile(t), declared: "image/png", want: exhibitfile.PNG},
		{name: "JPEG", body: jpegFile(t), declared: "image/jpeg", want: exhibitfile.JPEG},
		{name: "JPEG with restart markers and stuffed bytes", body: jpegWithRestarts(t), declared: "image/jpeg", want: exhibitfile.JPEG},
		{name: "JPEG with a little padding", body: cat(jpegFile(t), make([]byte, 100)), declared: "image/jpeg", want: exhibitfile.JPEG},
		{name: "multi-picture JPEG", body: cat(jpegFile(t), jpegFile(t)), declared: "image/jpeg", want: exhibitfile.JPEG},
		{name: "text", body: []byte("Statement of facts.\nWe paid on time.\n"), declared: "text/plain; charset=utf-8", want: exhibitfile.TextPlain},
		{name: "text holding HTML is text", body: []byte("<html><script>alert(1)</script></html>"), declared: "text/plain", want: exhibitfile.TextPlain},
		{name: "text with a byte-order mark", body: []byte("\xef\xbb\xbfBonjour, café.\n"), declared: "text/plain", want: exhibitfile.TextPlain},
		{name: "undeclared text", body: []byte("just words\n"), declared: "", want: exhibitfile.TextPlain},
		{name: "CSV", body: []byte("date,amount,note\r\n2026-01-02,40,\"paid, late\"\r\n\r\n2026-01-03,12,\"said \"\"ok\"\"\"\r\n"), declared: "text/csv", want: exhibitfile.CSV},
		{name: "JSON", body: []byte(`{"claim": [40, -1.5e3, true, null], "note": "caf\u00e9 \"ok\""}`), declared: "application/json", want: exhibitfile.JSON},
		{name: "an alias of an accepted type", body: jpegFile(t), declared: "image/jpg", want: exhibitfile.JPEG},
		{name: "a CSV as some systems declare it", body: []byte("a,b\n1,2\n"), declared: "text/x-csv", want: exhibitfile.CSV},
		{name: "text with a character across the read boundary", body: []byte(strings.Repeat("a", 32<<10-1) + "é€😀" + strings.Repeat("b", 100) + "😀"), declared: "text/plain", want: exhibitfile.TextPlain},
		{name: "a name with dots inside", body: []byte("v1 to v2\n"), declared: "text/plain", fileName: "notes..v2.txt", want: exhibitfile.TextPlain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			name := tt.fileName
			if name == "" {
				name = "exhibit 1.bin"
			}
			f, err := exhibitfile.Take(dir, bytes.NewReader(tt.body), tt.declared, name, policy())
			require.NoError(t, err)
			sum := sha256.Sum256(tt.body)
			require.Equal(t, name, f.Name)
			require.Equal(t, string(tt.want), f.MediaType)
			require.Equal(t, int64(len(tt.body)), f.Size)
			require.Equal(t, hex.EncodeToString(sum[:]), f.SHA256)

			for range 2 { // each Reader starts from the first byte
				r := f.Reader()
				require.Equal(t, f.Size, r.Size())
				got, err := io.ReadAll(r)
				require.NoError(t, err)
				require.Equal(t, tt.body, got, "the stored bytes are the uploaded bytes")
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "the accepted file is spooled until Close")

			require.NoError(t, f.Close())
			require.NoError(t, f.Close(), "Close twice is harmless")
			requireEmpty(t, dir)
		})
	}
}

func TestTakeRefusesAPolicyItCannotApply(t *testing.T) {
	for name, p := range map[string]exhibitfile.Policy{
		"no limit":        {Allowed: exhibitfile.DefaultAllowed()},
		"empty allowlist": {MaxFileBytes: limit},
		"an unknown type": {MaxFileBytes: limit, Allowed: []exhibitfile.MediaType{"application/zip"}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := exhibitfile.Take(dir, strings.NewReader("x"), "text/plain", "a.txt", p)
			require.Error(t, err)
			var ref *exhibitfile.Refusal
			require.False(t, errors.As(err, &ref), "a bad policy is the machine's error, not the uploader's")
			requireEmpty(t, dir)
		})
	}
}

func TestTakeAcceptsAFileOfExactlyTheLimit(t *testing.T) {
	dir := t.TempDir()
	body := bytes.Repeat([]byte("a"), limit)
	f, err := exhibitfile.Take(dir, bytes.NewReader(body), "text/plain", "a.txt", policy())
	require.NoError(t, err)
	require.Equal(t, int64(limit), f.Size)
	require.NoError(t, f.Close())
}

// countingReader counts what Take read.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestTakeStopsReadingOneByteOverTheLimit(t *testing.T) {
	dir := t.TempDir()
	r := &countingReader{r: bytes.NewReader(make([]byte, 10*limit))}
	_, err := exhibitfile.Take(dir, r, "text/plain", "a.txt", policy())
	require.ErrorIs(t, err, &exhibitfile.Refusal{Code: exhibitfile.CodeTooLarge})
	require.Equal(t, int64(limit+1), r.n)
	requireEmpty(t, dir)
}

func TestTakeReadsNothingOfAFileWithABadName(t *testing.T) {
	dir := t.TempDir()
	r := &countingReader{r: strings.NewReader("hello")}
	_, err := exhibitfile.Take(dir, r, "text/plain", "../a.txt", policy())
	require.ErrorIs(t, err, &exhibitfile.Refusal{Code: exhibitfile.CodeNameInvalid})
	require.Zero(t, r.n)
	requireEmpty(t, dir)
}

func TestTakeAnswersAnUnwritableSpoolDirectoryAsTheMachinesError(t *testing.T) {
	_, err := exhibitfile.Take(t.TempDir()+"/missing", strings.NewReader("hello"), "text/plain", "a.txt", policy())
	require.Error(t, err)
	var ref *exhibitfile.Refusal
	require.False(t, errors.As(err, &ref))
}

func TestEveryCodeHasAStatus(t *testing.T) {
	want := map[exhibitfile.Code]int{
		exhibitfile.CodeNameInvalid:      http.StatusUnprocessableEntity,
		exhibitfile.CodeUploadIncomplete: http.StatusBadRequest,
		exhibitfile.CodeTooLarge:         http.StatusRequestEntityTooLarge,
		exhibitfile.CodeEmpty:            http.StatusUnprocessableEntity,
		exhibitfile.CodeArchiveRefused:   http.StatusUnsupportedMediaType,
		exhibitfile.CodeTypeNotAllowed:   http.StatusUnsupportedMediaType,
		exhibitfile.CodeTypeMismatch:     http.StatusUnsupportedMediaType,
		exhibitfile.CodePolyglot:         http.StatusUnprocessableEntity,
		exhibitfile.CodeContentInvalid:   http.StatusUnprocessableEntity,
	}
	require.Len(t, exhibitfile.Codes, len(want))
	for _, c := range exhibitfile.Codes {
		require.Equal(t, want[c], c.Status(), "%s", c)
	}
}

// TestAMultipartBodyCutOffMidwayIsIncomplete reads the part as the handler
// will: the multipart reader reports a body that ends before its boundary
// as io.ErrUnexpectedEOF.
func TestAMultipartBodyCutOffMidwayIsIncomplete(t *testing.T) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", "scan.png")
	require.NoError(t, err)
	part.Write(pngFile(t))
	require.NoError(t, mw.Close())

	cut := body.Bytes()[:body.Len()/2]
	p, err := multipart.NewReader(bytes.NewReader(cut), mw.Boundary()).NextPart()
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = exhibitfile.Take(dir, p, "image/png", p.FileName(), policy())
	require.ErrorIs(t, err, &exhibitfile.Refusal{Code: exhibitfile.CodeUploadIncomplete})
	requireEmpty(t, dir)
}
