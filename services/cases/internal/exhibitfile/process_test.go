package exhibitfile_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/exhibitfile"
)

// processed takes body and returns its processing record.
func processed(t testing.TB, body []byte, declared, name string) exhibitfile.Processing {
	t.Helper()
	p := policy()
	p.MaxFileBytes = 1 << 20
	f, err := exhibitfile.Take(t.TempDir(), bytes.NewReader(body), declared, name, p)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f.Processing
}

func TestTheProcessingRecordOfEachType(t *testing.T) {
	longLine := strings.Repeat("word ", 100)
	tests := []struct {
		name     string
		body     []byte
		declared string
		fileName string
		want     exhibitfile.Processing
	}{
		{
			name: "a PDF: its page objects, the text of its uncompressed streams only",
			body: pdfFile(t), declared: "application/pdf", fileName: "invoice.pdf",
			want: exhibitfile.Processing{Text: "Invoice (March)\nTotal due: 40", PageCount: 2, SuggestedDescription: "Invoice (March)"},
		},
		{
			name: "a PDF from a real writer, uncompressed",
			body: fpdfFile(t, false, "Delivery note", "Signed by the buyer"), declared: "application/pdf", fileName: "note.pdf",
			want: exhibitfile.Processing{Text: "Delivery note\nSigned by the buyer", PageCount: 2, SuggestedDescription: "Delivery note"},
		},
		{
			name: "a PDF whose text is compressed: pages, no text, the name describes it",
			body: fpdfFile(t, true, "One", "Two", "Three"), declared: "application/pdf", fileName: "site_report-3.pdf",
			want: exhibitfile.Processing{PageCount: 3, SuggestedDescription: "site report-3"},
		},
		{
			name: "a PDF with page objects in a compressed object stream",
			body: pdfWithObjectStream(t), declared: "application/pdf", fileName: "contract.pdf",
			want: exhibitfile.Processing{PageCount: 3, SuggestedDescription: "contract"},
		},
		{
			name: "an image: one page, no text",
			body: pngFile(t), declared: "image/png", fileName: "site_photo_2.png",
			want: exhibitfile.Processing{PageCount: 1, SuggestedDescription: "site photo 2"},
		},
		{
			name: "a JPEG",
			body: jpegFile(t), declared: "image/jpeg", fileName: "receipt.jpeg",
			want: exhibitfile.Processing{PageCount: 1, SuggestedDescription: "receipt"},
		},
		{
			name: "text: all of it, described by its first line with words",
			body: []byte("\xef\xbb\xbf\n  ---\n  Statement   of\tfacts.  \nWe paid.\n"), declared: "text/plain", fileName: "statement.txt",
			want: exhibitfile.Processing{Text: "---\n  Statement   of\tfacts.  \nWe paid.", SuggestedDescription: "Statement of facts."},
		},
		{
			name: "a long first line is cut with an ellipsis",
			body: []byte(longLine), declared: "text/plain", fileName: "long.txt",
			want: exhibitfile.Processing{Text: strings.TrimSpace(longLine), SuggestedDescription: strings.TrimSpace(longLine[:279]) + "…"},
		},
		{
			name: "a CSV: its header describes it",
			body: []byte("date,amount\n2026-01-02,40\n"), declared: "text/csv", fileName: "payments.csv",
			want: exhibitfile.Processing{Text: "date,amount\n2026-01-02,40", SuggestedDescription: "date,amount"},
		},
		{
			name: "JSON: its text, described by its name",
			body: []byte(`{"claim": 40}`), declared: "application/json", fileName: "claim_data.json",
			want: exhibitfile.Processing{Text: `{"claim": 40}`, SuggestedDescription: "claim data"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := processed(t, tt.body, tt.declared, tt.fileName)
			require.Empty(t, cmp.Diff(tt.want, got))
			require.Equal(t, got, processed(t, tt.body, tt.declared, tt.fileName), "the same bytes give the same record")
			require.True(t, utf8.ValidString(got.Text))
			require.LessOrEqual(t, utf8.RuneCountInString(got.SuggestedDescription), exhibitfile.MaxDescriptionRunes)
		})
	}
}

func TestTextIsCappedAtMaxTextRunes(t *testing.T) {
	exact := strings.Repeat("é", exhibitfile.MaxTextRunes)
	got := processed(t, []byte(exact), "text/plain", "a.txt")
	require.Equal(t, exact, got.Text)
	require.False(t, got.TextTruncated)

	got = processed(t, []byte(exact+"é"), "text/plain", "a.txt")
	require.Equal(t, exact, got.Text)
	require.True(t, got.TextTruncated)
}

// FuzzJSONIsCheckedAsEncodingJSONWouldParseIt holds the streaming JSON check
// to json.Valid: what one accepts, the other does. The seeds run with every
// `go test`; `go test -fuzz` looks further.
func FuzzJSONIsCheckedAsEncodingJSONWouldParseIt(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `0`, `-0`, `-0.5e+10`, `1E-2`, `"x"`, `true`, `false`, `null`, ` [1, 2 ,3] `,
		`{"a": {"b": [true, false, null, "\u00e9\n\"\\\/"]}}`, `[[[[]]]]`, `{"a":1,"b":[{}]}`, "\t\r\n 7 \n",
		`01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `[1,]`, `{"a"}`, `{"a":}`, `{,}`, `{"a":1,}`, `[`, `]`, `{`,
		`"unterminated`, `"bad \x escape"`, `"\u12g4"`, `tru`, `nul`, `truex`, `[] []`, `{"a" 1}`, `{1: 2}`,
		`[1 2]`, `"tab	inside"`, `  `, `"\ud800"`, `1.5e3.2`, `-01`, `[-]`, `{"a":[1,{"b":null}],"c":"d"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || !utf8.Valid(data) || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) ||
			bytes.ContainsFunc(data, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' && r != 0x1b }) {
			return // refused before the JSON check, for reasons of their own
		}
		dir := t.TempDir()
		file, err := exhibitfile.Take(dir, bytes.NewReader(data), "application/json", "data.json", policy())
		if file != nil {
			file.Close()
		}
		require.Equal(t, json.Valid(data), err == nil, "input %q: %v", data, err)
	})
}
