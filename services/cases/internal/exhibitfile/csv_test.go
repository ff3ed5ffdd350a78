package exhibitfile_test

import (
	"bytes"
	"encoding/csv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/exhibitfile"
)

// FuzzCSVIsCheckedAsEncodingCSVWouldReadIt holds the streaming CSV check to
// encoding/csv (strict quotes, every record as wide as the first): what one
// reads, the other accepts, when it has at least one record.
func FuzzCSVIsCheckedAsEncodingCSVWouldReadIt(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n", "a,b\r\n1,2\r\n", "a,b\n1,2", "a\n\n\nb\n", `"a ""q""",b` + "\n1,2\n", "\"multi\nline\",x\n1,2\n",
		"a,b\n1\n", "a,b\n1,2,3\n", `a"b,c` + "\n", `"open,b` + "\n", `"a"x,b` + "\n", ",\n,\n", "\n", "\r\n", "a,\"\"\n",
		" \"a\",b\n", "a\r\nb\r\n", "a\rb\n", "\"a\"\r\nb\n", "\"a\"\rb\n", "x,y\r\n\r\n1,2\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || !utf8.Valid(data) || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) ||
			bytes.ContainsFunc(data, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' && r != 0x1b }) {
			return // refused before the CSV check, for reasons of their own
		}
		records, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		want := err == nil && len(records) > 0

		file, err := exhibitfile.Take(t.TempDir(), bytes.NewReader(data), "text/csv", "data.csv", policy())
		if file != nil {
			file.Close()
		}
		require.Equal(t, want, err == nil, "input %q: %v", data, err)
	})
}
