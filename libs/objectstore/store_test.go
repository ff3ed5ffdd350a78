package objectstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/libs/objectstore/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// eachStore runs test against a Dir in a fresh directory and an S3 store
// of a fresh bucket on the real test server: one contract, every
// implementation.
func eachStore(t *testing.T, test func(t *testing.T, s objectstore.Store)) {
	t.Helper()
	t.Run("dir", func(t *testing.T) {
		d, err := objectstore.NewDir(t.TempDir())
		require.NoError(t, err)
		test(t, d)
	})
	t.Run("s3", func(t *testing.T) { test(t, s3test.NewStore(t)) })
}

func put(t *testing.T, s objectstore.Store, key, content, contentType string) {
	t.Helper()
	require.NoError(t, s.Put(context.Background(), key, strings.NewReader(content), int64(len(content)), contentType))
}

func read(t *testing.T, s objectstore.Store, key string) (string, objectstore.Info) {
	t.Helper()
	body, info, err := s.Open(context.Background(), key)
	require.NoError(t, err)
	defer body.Close()
	b, err := io.ReadAll(body)
	require.NoError(t, err)
	return string(b), info
}

func keys(t *testing.T, s objectstore.Store, prefix string) []string {
	t.Helper()
	k, err := s.Keys(context.Background(), prefix)
	require.NoError(t, err)
	return k
}

func TestPutOpenStatDelete(t *testing.T) {
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		ctx := context.Background()
		put(t, s, "cases/c1/evidence/e1", "exhibit A", "text/plain; charset=utf-8")

		got, info := read(t, s, "cases/c1/evidence/e1")
		assert.Equal(t, "exhibit A", got)
		assert.Equal(t, objectstore.Info{Size: 9, ContentType: "text/plain; charset=utf-8"}, info)
		st, err := s.Stat(ctx, "cases/c1/evidence/e1")
		require.NoError(t, err)
		assert.Equal(t, info, st)

		require.NoError(t, s.Delete(ctx, "cases/c1/evidence/e1"))
		_, _, err = s.Open(ctx, "cases/c1/evidence/e1")
		assert.ErrorIs(t, err, objectstore.ErrNotFound)
		_, err = s.Stat(ctx, "cases/c1/evidence/e1")
		assert.ErrorIs(t, err, objectstore.ErrNotFound)
		assert.NoError(t, s.Delete(ctx, "cases/c1/evidence/e1"), "deleting an absent key is not an error")
		assert.Empty(t, keys(t, s, ""))
	})
}

func TestContentTypeRoundTrips(t *testing.T) {
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		for i, ct := range []string{"application/pdf", "image/png", "application/octet-stream", `text/csv; charset=utf-8; header=present`} {
			key := fmt.Sprintf("ct/%d", i)
			put(t, s, key, "x", ct)
			st, err := s.Stat(context.Background(), key)
			require.NoError(t, err)
			assert.Equal(t, ct, st.ContentType)
			_, info := read(t, s, key)
			assert.Equal(t, ct, info.ContentType)
		}
	})
}

func TestEmptyObject(t *testing.T) {
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		put(t, s, "empty", "", "application/octet-stream")
		got, info := read(t, s, "empty")
		assert.Equal(t, "", got)
		assert.Equal(t, int64(0), info.Size)
	})
}

func TestPutReplacesWhole(t *testing.T) {
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		put(t, s, "k", "a longer first version", "text/plain")
		put(t, s, "k", "second", "application/json")
		got, info := read(t, s, "k")
		assert.Equal(t, "second", got)
		assert.Equal(t, objectstore.Info{Size: 6, ContentType: "application/json"}, info)
		assert.Equal(t, []string{"k"}, keys(t, s, ""))
	})
}

func TestKeysInLexicalOrderUnderAPrefix(t *testing.T) {
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		// "a" and "a/b" are both keys, as S3 allows.
		for _, k := range []string{"cases/c2/b", "cases/c1/z", "cases/c1", "cases/c1/a", "other/x", "cases/c10/a", "a", "a/b"} {
			put(t, s, k, k, "text/plain")
		}
		assert.Equal(t, []string{"cases/c1", "cases/c1/a", "cases/c1/z", "cases/c10/a", "cases/c2/b"}, keys(t, s, "cases/"))
		assert.Equal(t, []string{"cases/c1/a", "cases/c1/z"}, keys(t, s, "cases/c1/"))
		assert.Equal(t, []string{"cases/c1", "cases/c1/a", "cases/c1/z", "cases/c10/a"}, keys(t, s, "cases/c1"))
		assert.Equal(t, []string{"a", "a/b", "cases/c1", "cases/c1/a", "cases/c1/z", "cases/c10/a", "cases/c2/b", "other/x"}, keys(t, s, ""))
		assert.Empty(t, keys(t, s, "nothing/"))
		got, _ := read(t, s, "a")
		assert.Equal(t, "a", got)
		got, _ = read(t, s, "a/b")
		assert.Equal(t, "a/b", got)
	})
}

// Every key refusal happens before anything is read or stored.
func TestInvalidKeysAreRefused(t *testing.T) {
	for name, key := range map[string]string{
		"empty":             "",
		"absolute":          "/cases/c1",
		"dot-dot":           "cases/../etc/passwd",
		"dot":               "cases/./c1",
		"doubled slash":     "cases//c1",
		"trailing slash":    "cases/c1/",
		"newline":           "cases/c1\nx",
		"nul":               "cases/\x00",
		"delete":            "cases/\x7f",
		"C1 control":        "cases/\u0085",
		"not UTF-8":         "cases/\xff",
		"longer than limit": strings.Repeat("k", objectstore.MaxKeyLen+1),
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, objectstore.ValidateKey(key), objectstore.ErrInvalidKey)
		})
	}
	require.NoError(t, objectstore.ValidateKey(strings.Repeat("k", objectstore.MaxKeyLen)))
	require.NoError(t, objectstore.ValidateKey("cases/c1/evidence/e 1 (copy).pdf"))

	eachStore(t, func(t *testing.T, s objectstore.Store) {
		ctx := context.Background()
		r := &countingReader{r: strings.NewReader("x")}
		assert.ErrorIs(t, s.Put(ctx, "../x", r, 1, "text/plain"), objectstore.ErrInvalidKey)
		assert.Zero(t, r.n, "nothing is read for a refused key")
		_, _, err := s.Open(ctx, "/x")
		assert.ErrorIs(t, err, objectstore.ErrInvalidKey)
		_, err = s.Stat(ctx, "")
		assert.ErrorIs(t, err, objectstore.ErrInvalidKey)
		assert.ErrorIs(t, s.Delete(ctx, "a//b"), objectstore.ErrInvalidKey)
		_, err = s.Keys(ctx, "/")
		assert.ErrorIs(t, err, objectstore.ErrInvalidKey)
		assert.Empty(t, keys(t, s, ""))
	})
}

func TestInvalidObjectsAreRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		ctx := context.Background()
		for name, tc := range map[string]struct {
			size int64
			ct   string
		}{
			"negative size":        {-1, "text/plain"},
			"no content type":      {1, ""},
			"malformed type":       {1, "text/plain; charset"},
			"content type too big": {1, "text/plain; x=" + strings.Repeat("y", 300)},
		} {
			r := &countingReader{r: strings.NewReader("x")}
			err := s.Put(ctx, "k", r, tc.size, tc.ct)
			assert.ErrorIs(t, err, objectstore.ErrInvalidObject, name)
			assert.Zero(t, r.n, "%s: nothing is read", name)
		}
		assert.Empty(t, keys(t, s, ""))
	})
}

// A reader that ends early, has more than declared or fails midway leaves
// no object: not under the key, not anywhere in the store. Sizes on both
// sides of the multipart threshold exercise S3's single PUT and its
// multipart upload; files exercise the section reads S3 uses for them.
func TestPutStoresExactlyTheSizeOrNothing(t *testing.T) {
	sizes := []int{0, 1, 1000, objectstore.PartSize + 1000}
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		ctx := context.Background()
		for _, n := range sizes {
			content := pattern(n + 1)
			for name, tc := range map[string]struct {
				reader   func() io.Reader
				declared int64
				want     error
			}{
				"short reader": {func() io.Reader { return onlyReader{bytes.NewReader(content[:n])} }, int64(n + 1), objectstore.ErrSizeMismatch},
				"long reader":  {func() io.Reader { return onlyReader{bytes.NewReader(content[:n+1])} }, int64(n), objectstore.ErrSizeMismatch},
				"short file":   {func() io.Reader { return spool(t, content[:n]) }, int64(n + 1), objectstore.ErrSizeMismatch},
				"long file":    {func() io.Reader { return spool(t, content[:n+1]) }, int64(n), objectstore.ErrSizeMismatch},
				"failing reader": {func() io.Reader {
					return io.MultiReader(bytes.NewReader(content[:n/2]), errReader{errDisk})
				}, int64(n), errDisk},
			} {
				if name == "failing reader" && n == 0 {
					continue // nothing to fail in the middle of
				}
				key := fmt.Sprintf("exact/%d/%s", n, strings.ReplaceAll(name, " ", "-"))
				err := s.Put(ctx, key, tc.reader(), tc.declared, "application/octet-stream")
				require.ErrorIs(t, err, tc.want, "%s of %d bytes", name, n)
				_, err = s.Stat(ctx, key)
				require.ErrorIs(t, err, objectstore.ErrNotFound, "%s of %d bytes left an object", name, n)
			}
			// The exact size from either kind of reader is stored.
			key := fmt.Sprintf("exact/%d/ok", n)
			require.NoError(t, s.Put(ctx, key, onlyReader{bytes.NewReader(content[:n])}, int64(n), "application/octet-stream"))
			require.NoError(t, s.Put(ctx, key+"-file", spool(t, content[:n]), int64(n), "application/octet-stream"))
			for _, k := range []string{key, key + "-file"} {
				got, info := read(t, s, k)
				require.Equal(t, int64(n), info.Size)
				require.True(t, bytes.Equal(content[:n], []byte(got)), "%s holds what was put", k)
			}
		}
		var want []string
		for _, n := range sizes {
			want = append(want, fmt.Sprintf("exact/%d/ok", n), fmt.Sprintf("exact/%d/ok-file", n))
		}
		assert.ElementsMatch(t, want, keys(t, s, ""), "nothing half-stored is left")
	})
}

// A file is read from its current offset, as any reader is.
func TestPutReadsAFileFromItsOffset(t *testing.T) {
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		f := spool(t, []byte("headerPAYLOAD"))
		_, err := f.Seek(6, io.SeekStart)
		require.NoError(t, err)
		require.NoError(t, s.Put(context.Background(), "k", f, 7, "text/plain"))
		got, _ := read(t, s, "k")
		assert.Equal(t, "PAYLOAD", got)
	})
}

// A failed multipart upload is aborted: the server keeps none of its
// parts.
func TestFailedMultipartUploadIsAborted(t *testing.T) {
	srv := s3test.Start(t)
	cfg := srv.NewBucket(t)
	s, err := objectstore.NewS3(context.Background(), cfg)
	require.NoError(t, err)
	n := 3*objectstore.PartSize + 5
	content := pattern(n)
	// Fails in the third part, after two were uploaded.
	r := io.MultiReader(bytes.NewReader(content[:2*objectstore.PartSize+100]), errReader{errDisk})
	require.ErrorIs(t, s.Put(context.Background(), "big", r, int64(n), "application/octet-stream"), errDisk)
	assert.Empty(t, srv.IncompleteUploads(t, cfg.Bucket), "the upload was aborted")
	assert.Empty(t, keys(t, s, ""))
}

func TestPutStopsWhenTheContextEnds(t *testing.T) {
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		n := objectstore.PartSize + 10
		content := pattern(n)
		r := &cancellingReader{r: bytes.NewReader(content), after: n / 2, cancel: cancel}
		err := s.Put(ctx, "cancelled", r, int64(n), "application/octet-stream")
		require.ErrorIs(t, err, context.Canceled)
		_, err = s.Stat(context.Background(), "cancelled")
		require.ErrorIs(t, err, objectstore.ErrNotFound)
	})
}

func TestConcurrentPuts(t *testing.T) {
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		const writers = 10
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i := range writers {
			wg.Go(func() {
				// Every other one spans several parts.
				n := 1000 + i
				if i%2 == 1 {
					n = objectstore.PartSize + 1000*i
				}
				errs[i] = s.Put(context.Background(), fmt.Sprintf("concurrent/%02d", i), onlyReader{bytes.NewReader(patternFrom(i, n))}, int64(n), "application/octet-stream")
			})
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, i)
		}
		k := keys(t, s, "concurrent/")
		require.Len(t, k, writers)
		for i, key := range k {
			got, info := read(t, s, key)
			assert.True(t, bytes.Equal(patternFrom(i, int(info.Size)), []byte(got)), key)
		}
	})
}

// A 100 MB object streams through: the heap does not grow with it, from a
// plain reader (S3 holds one part) or from a spool file (S3 reads parts in
// place). Ten such uploads from files at once keep the heap as flat.
func TestLargePutsKeepTheHeapFlat(t *testing.T) {
	const size = 100 << 20
	const bound = 64 << 20
	spoolPath := filepath.Join(t.TempDir(), "spool")
	writePattern(t, spoolPath, size)
	want := patternSum(size)
	eachStore(t, func(t *testing.T, s objectstore.Store) {
		ctx := context.Background()
		peak := heapGrowth(t, func() {
			require.NoError(t, s.Put(ctx, "large/plain", &patternReader{left: size}, size, "application/octet-stream"))
		})
		t.Logf("one 100 MB put from a reader: heap grew %d MiB at most", peak>>20)
		assert.Less(t, peak, uint64(bound))

		peak = heapGrowth(t, func() {
			var wg sync.WaitGroup
			errs := make([]error, 10)
			for i := range errs {
				wg.Go(func() {
					f, err := os.Open(spoolPath)
					if err != nil {
						errs[i] = err
						return
					}
					defer f.Close()
					errs[i] = s.Put(ctx, fmt.Sprintf("large/file-%d", i), f, size, "application/octet-stream")
				})
			}
			wg.Wait()
			require.NoError(t, errors.Join(errs...))
		})
		t.Logf("ten 100 MB puts from files at once: heap grew %d MiB at most", peak>>20)
		assert.Less(t, peak, uint64(bound))

		for _, key := range []string{"large/plain", "large/file-0", "large/file-9"} {
			body, info, err := s.Open(ctx, key)
			require.NoError(t, err)
			h := sha256.New()
			_, err = io.Copy(h, body)
			require.NoError(t, body.Close())
			require.NoError(t, err)
			assert.Equal(t, int64(size), info.Size)
			assert.Equal(t, want, h.Sum(nil), "%s holds what was put", key)
		}
	})
}

// heapGrowth runs f while sampling the heap in use, and returns the most
// it rose above where it stood before f.
func heapGrowth(t *testing.T, f func()) uint64 {
	t.Helper()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
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

var errDisk = errors.New("disk went away")

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// onlyReader hides every method but Read, so the store sees a plain
// stream, as from a network body.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// cancellingReader cancels the context once it has passed on after bytes.
type cancellingReader struct {
	r      io.Reader
	after  int
	read   int
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	if c.read >= c.after {
		c.cancel()
	}
	return n, err
}

// spool writes content to a file and returns it open at its start, as the
// cases service hands over a validated upload.
func spool(t *testing.T, content []byte) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "spool-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	_, err = f.Write(content)
	require.NoError(t, err)
	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err)
	return f
}

// pattern returns n bytes in which every 8-byte word holds its own index,
// so a part stored out of place, twice or not at all shows.
func pattern(n int) []byte { return patternFrom(0, n) }

func patternFrom(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = patternByte(seed, i)
	}
	return b
}

func patternByte(seed, i int) byte {
	word := uint64(i/8) + uint64(seed)<<48
	return byte(word >> (8 * (i % 8)))
}

// patternReader streams pattern(left) without holding it.
type patternReader struct {
	off, left int
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	n := min(len(b), p.left)
	for i := range n {
		b[i] = patternByte(0, p.off+i)
	}
	p.off += n
	p.left -= n
	return n, nil
}

func patternSum(n int) []byte {
	h := sha256.New()
	_, _ = io.Copy(h, &patternReader{left: n})
	return h.Sum(nil)
}

func writePattern(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = io.Copy(f, &patternReader{left: n})
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
