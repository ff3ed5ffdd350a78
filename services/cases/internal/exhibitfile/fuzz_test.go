package exhibitfile_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/exhibitfile"
)

var declaredTypes = []string{"", "application/octet-stream", "application/pdf", "image/png", "image/jpeg", "text/plain", "text/csv", "application/json"}

// FuzzTakeKeepsAllOrNothing holds Take, on any bytes declared as any type,
// to its promise: a refusal leaves nothing behind, an accepted file is the
// uploaded bytes, and nothing panics.
func FuzzTakeKeepsAllOrNothing(f *testing.F) {
	for i, seed := range [][]byte{
		pdfFile(f), pdfWithObjectStream(f), pngFile(f), jpegFile(f), jpegWithRestarts(f), zipFile(f, "a"), gzipFile(f),
		[]byte("plain text\n"), []byte("a,b\n1,2\n"), []byte(`{"a":[1,2]}`), cat(pngFile(f), []byte("x")),
	} {
		f.Add(seed, uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, typ uint8) {
		dir := t.TempDir()
		declared := declaredTypes[int(typ)%len(declaredTypes)]
		file, err := exhibitfile.Take(dir, bytes.NewReader(data), declared, "exhibit.bin", policy())
		if err != nil {
			var ref *exhibitfile.Refusal
			require.True(t, errors.As(err, &ref), "only refusals on readable input: %v", err)
			requireEmpty(t, dir)
			return
		}
		got, err := io.ReadAll(file.Reader())
		require.NoError(t, err)
		require.Equal(t, data, got)
		require.NoError(t, file.Close())
		requireEmpty(t, dir)
	})
}
