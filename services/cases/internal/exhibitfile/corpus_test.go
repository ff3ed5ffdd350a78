package exhibitfile_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/go-pdf/fpdf"
	"github.com/stretchr/testify/require"
)

// The corpus is made here, in code, so every malicious file says how it is
// built.

func pngFile(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func jpegFile(t testing.TB) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 16, 16))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}))
	return b.Bytes()
}

// progressiveLikeJPEG has restart markers and stuffed bytes in its scan, as
// real encoders write them.
func jpegWithRestarts(t testing.TB) []byte {
	t.Helper()
	j := jpegFile(t)
	eoi := len(j) - 2
	// Insert RST0 and a stuffed 0xFF00 into the entropy-coded data before EOI.
	out := append([]byte{}, j[:eoi]...)
	out = append(out, 0xff, 0x00, 0x12, 0xff, 0xd0, 0x34)
	return append(out, j[eoi:]...)
}

// pngChunk is one PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	binary.Write(&b, binary.BigEndian, crc.Sum32())
	return b.Bytes()
}

// pngWithChunkAfterIHDR puts an extra chunk right after IHDR.
func pngWithChunkAfterIHDR(t testing.TB, chunk []byte) []byte {
	t.Helper()
	p := pngFile(t)
	at := 8 + 25 // signature, IHDR (12 + 13)
	return append(append(append([]byte{}, p[:at]...), chunk...), p[at:]...)
}

// pdfFile is a small hand-written PDF: two page objects (one written
// "/Type/Page" without a space), an uncompressed content stream with text,
// and a compressed one whose text is not read.
func pdfFile(t testing.TB) []byte {
	t.Helper()
	content := "BT /F1 12 Tf 72 700 Td (Invoice \\(March\\)) Tj T* [(Total) -250 ( due: 40)] TJ ET\n"
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("BT (Hidden text) Tj ET"))
	zw.Close()
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	b.WriteString("1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n")
	b.WriteString("2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >> endobj\n")
	b.WriteString("3 0 obj << /Type /Page /Parent 2 0 R /Contents 5 0 R >> endobj\n")
	b.WriteString("4 0 obj << /Type/Page /Parent 2 0 R /Contents 6 0 R >> endobj\n")
	fmt.Fprintf(&b, "5 0 obj << /Length %d >>\nstream\n%sendstream\nendobj\n", len(content), content)
	fmt.Fprintf(&b, "6 0 obj << /Length %d /Filter /FlateDecode >>\nstream\r\n%s\nendstream\nendobj\n", z.Len(), z.Bytes())
	b.WriteString("trailer << /Root 1 0 R >>\nstartxref\n0\n%%EOF\n")
	return b.Bytes()
}

// fpdfFile is a PDF from a real writer (the one the awards use), with its
// streams compressed or not.
func fpdfFile(t testing.TB, compress bool, pages ...string) []byte {
	t.Helper()
	doc := fpdf.New("P", "mm", "A4", "")
	doc.SetCompression(compress)
	doc.SetFont("Helvetica", "", 12)
	for _, text := range pages {
		doc.AddPage()
		doc.Cell(40, 10, text)
	}
	var b bytes.Buffer
	require.NoError(t, doc.Output(&b))
	return b.Bytes()
}

func zipFile(t testing.TB, names ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, err := zw.Create(n)
		require.NoError(t, err)
		fmt.Fprintf(w, "content of %s", n)
	}
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func gzipFile(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte("plain text inside"))
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func tarFile(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	body := []byte("statement.txt content")
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "statement.txt", Mode: 0o600, Size: int64(len(body))}))
	tw.Write(body)
	require.NoError(t, tw.Close())
	return b.Bytes()
}

func gifFile(t testing.TB) []byte {
	t.Helper()
	return []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// pdfWithHead puts s right after the PDF header line.
func pdfWithHead(t testing.TB, s string) []byte {
	t.Helper()
	p := pdfFile(t)
	i := bytes.IndexByte(p, '\n') + 1
	return cat(p[:i], []byte("% "+s+"\n"), p[i:])
}

// pdfWithObjectStream keeps two of its three page objects in a compressed
// object stream, as PDF 1.5 writers do.
func pdfWithObjectStream(t testing.TB) []byte {
	t.Helper()
	objects := "4 0 5 33 << /Type /Page /Parent 2 0 R >> << /Type/Page /Parent 2 0 R >>"
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte(objects))
	zw.Close()
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	b.WriteString("1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n")
	b.WriteString("2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >> endobj\n")
	b.WriteString("3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n")
	fmt.Fprintf(&b, "6 0 obj << /Type /ObjStm /N 2 /First 9 /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream\nendobj\n", z.Len(), z.Bytes())
	b.WriteString("trailer << /Root 1 0 R >>\nstartxref\n0\n%%EOF\n")
	return b.Bytes()
}
