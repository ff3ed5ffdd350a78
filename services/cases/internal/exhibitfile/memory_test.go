package exhibitfile_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/exhibitfile"
)

const hundredMB = 100 << 20

// lines is an endless text, read in pieces, never held.
type lines struct{ left int64 }

var line = []byte("Exhibit C-12, page 4: the delivery was late by three days.\n")

func (l *lines) Read(p []byte) (int, error) {
	if l.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && l.left > 0 {
		k := copy(p[n:min(len(p), n+int(l.left))], line)
		n += k
		l.left -= int64(k)
	}
	return n, nil
}

// bigPNG streams a valid PNG of about size bytes: one IDAT chunk of zeros
// (the check walks chunks and their CRCs, it does not decode pixels).
func bigPNG(size int64) io.Reader {
	ihdr := pngChunk("IHDR", []byte{0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0})
	n := size - int64(8+len(ihdr)+12+12)
	crc := crc32.NewIEEE()
	crc.Write([]byte("IDAT"))
	zeros := make([]byte, 32<<10)
	for left := n; left > 0; left -= int64(len(zeros)) {
		crc.Write(zeros[:min(left, int64(len(zeros)))])
	}
	var head bytes.Buffer
	head.WriteString("\x89PNG\r\n\x1a\n")
	head.Write(ihdr)
	binary.Write(&head, binary.BigEndian, uint32(n))
	head.WriteString("IDAT")
	var tail bytes.Buffer
	binary.Write(&tail, binary.BigEndian, crc.Sum32())
	tail.Write(pngChunk("IEND", nil))
	return io.MultiReader(&head, io.LimitReader(zeroReader{}, n), &tail)
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// peakHeap runs f while sampling the heap in use, and returns how far it
// rose above where it stood before.
func peakHeap(t testing.TB, f func()) uint64 {
	t.Helper()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base, peak := m.HeapInuse, m.HeapInuse
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return peak - base
}

func TestA100MBUploadStreamsInBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	p := exhibitfile.Policy{MaxFileBytes: 2 * hundredMB, Allowed: exhibitfile.DefaultAllowed()}
	var file *exhibitfile.File
	rise := peakHeap(t, func() {
		var err error
		file, err = exhibitfile.Take(dir, &lines{left: hundredMB}, "text/plain", "transcript.txt", p)
		require.NoError(t, err)
	})
	defer file.Close()
	require.Equal(t, int64(hundredMB), file.Size)
	require.True(t, file.Processing.TextTruncated)
	t.Logf("heap rose by %d KiB for a 100 MB text", rise>>10)
	require.Less(t, rise, uint64(16<<20), "the heap must not grow with the file")
}

func TestTenUploadsOf100MBAtOnceKeepTheHeapFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1 GB to the spool directory")
	}
	dir := t.TempDir()
	p := exhibitfile.Policy{MaxFileBytes: 2 * hundredMB, Allowed: exhibitfile.DefaultAllowed()}
	rise := peakHeap(t, func() {
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for range 10 {
			wg.Go(func() {
				f, err := exhibitfile.Take(dir, bigPNG(hundredMB), "image/png", "scan.png", p)
				if err == nil {
					err = f.Close()
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	})
	requireEmpty(t, dir)
	t.Logf("heap rose by %d KiB for ten 100 MB uploads at once", rise>>10)
	require.Less(t, rise, uint64(32<<20), "ten uploads must not hold their files")
}
