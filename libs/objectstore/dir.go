package objectstore

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Dir keeps objects as files in a local directory: the embedded store of
// `make run` and of a single machine. Its layout under the root is
//
//	objects/<h[:2]>/<h>   one file per object, h the hex SHA-256 of its key
//	tmp/put-*             uploads in progress
//
// Each object file starts with one JSON line, the header
// {"key":…,"contentType":…,"size":…}, followed by the object's bytes; the
// content type lives with the bytes, so one rename publishes both, and
// `head -1` shows an operator what a file is. Naming files by the key's
// hash rather than by the key itself lets "a" and "a/b" both be keys, as
// in S3, and keeps every name short whatever the key's length.
//
// Put writes into tmp/, fsyncs, renames into objects/ and fsyncs the
// directory: a write cut off at any point (an error, a crash, a power
// loss) leaves at most a file in tmp/, which no read looks at and NewDir
// sweeps once it is an hour old.
type Dir struct {
	root string
}

// staleTemp is the age at which NewDir removes an upload left in tmp/: far
// longer than any upload runs, so it never races a live writer in another
// process sharing the directory.
const staleTemp = time.Hour

// maxHeaderLen bounds the header line: a 512-byte key and a 255-byte
// content type, JSON-escaped at most six bytes each, fit well within it.
const maxHeaderLen = 8 << 10

// NewDir opens the store rooted at root, creating it (mode 0750) when
// absent, and removes uploads an earlier process left unfinished over an
// hour ago.
func NewDir(root string) (*Dir, error) {
	if root == "" {
		return nil, errors.New("objectstore: the directory is empty")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("objectstore: directory %s: %w", root, err)
	}
	d := &Dir{root: abs}
	for _, sub := range []string{"objects", "tmp"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o750); err != nil {
			return nil, fmt.Errorf("objectstore: creating %s: %w", filepath.Join(abs, sub), err)
		}
	}
	if err := d.sweepTemp(time.Now().Add(-staleTemp)); err != nil {
		return nil, err
	}
	return d, nil
}

// Root returns the store's directory.
func (d *Dir) Root() string { return d.root }

type dirHeader struct {
	Key         string `json:"key"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
}

func (d *Dir) objectPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(d.root, "objects", h[:2], h)
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (err error) {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := validateObject(size, contentType); err != nil {
		return err
	}
	header, err := json.Marshal(dirHeader{Key: key, ContentType: contentType, Size: size})
	if err != nil {
		return fmt.Errorf("objectstore: encoding the header of %s: %w", quoteKey(key), err)
	}
	tmp, err := os.CreateTemp(filepath.Join(d.root, "tmp"), "put-*")
	if err != nil {
		return fmt.Errorf("objectstore: putting %s: %w", quoteKey(key), err)
	}
	published := false
	defer func() {
		if !published {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 64<<10)
	if _, err := w.Write(append(header, '\n')); err != nil {
		return fmt.Errorf("objectstore: putting %s: %w", quoteKey(key), err)
	}
	if _, err := io.Copy(w, newExactReader(ctx, r, size)); err != nil {
		return fmt.Errorf("objectstore: putting %s: %w", quoteKey(key), err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("objectstore: putting %s: %w", quoteKey(key), err)
	}
	// The bytes reach the disk before the name does: after a crash the
	// name never points at a file whose content was lost.
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("objectstore: putting %s: syncing: %w", quoteKey(key), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("objectstore: putting %s: %w", quoteKey(key), err)
	}
	final := d.objectPath(key)
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o750); err != nil {
		return fmt.Errorf("objectstore: putting %s: %w", quoteKey(key), err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return fmt.Errorf("objectstore: putting %s: %w", quoteKey(key), err)
	}
	published = true
	// The rename is durable once the directories holding the new entry
	// are: the fan-out directory, and objects/ in case it was just made.
	for _, dir := range []string{parent, filepath.Dir(parent)} {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("objectstore: putting %s: syncing %s: %w", quoteKey(key), dir, err)
		}
	}
	return nil
}

// Open implements Store.
func (d *Dir) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if err := ValidateKey(key); err != nil {
		return nil, Info{}, err
	}
	f, h, offset, err := d.openObject(key)
	if err != nil {
		return nil, Info{}, err
	}
	return &fileBody{SectionReader: io.NewSectionReader(f, offset, h.Size), f: f}, Info{Size: h.Size, ContentType: h.ContentType}, nil
}

// Stat implements Store.
func (d *Dir) Stat(ctx context.Context, key string) (Info, error) {
	if err := ValidateKey(key); err != nil {
		return Info{}, err
	}
	f, h, _, err := d.openObject(key)
	if err != nil {
		return Info{}, err
	}
	_ = f.Close()
	return Info{Size: h.Size, ContentType: h.ContentType}, nil
}

// Delete implements Store. A reader that has the object open keeps reading
// it whole: the file is unlinked, not truncated.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := os.Remove(d.objectPath(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("objectstore: deleting %s: %w", quoteKey(key), err)
	}
	return nil
}

// Keys implements Store. It reads the header of every object, so it costs
// one open per object in the store: a tool for tests and operators, not
// for a request path.
func (d *Dir) Keys(ctx context.Context, prefix string) ([]string, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	var keys []string
	objects := filepath.Join(d.root, "objects")
	err := filepath.WalkDir(objects, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		h, err := readHeaderFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted while listing
		}
		if err != nil {
			return err
		}
		if strings.HasPrefix(h.Key, prefix) {
			keys = append(keys, h.Key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("objectstore: listing %s: %w", quoteKey(prefix), err)
	}
	slices.Sort(keys)
	return keys, nil
}

// openObject opens key's file and checks it: its header names key and its
// length is the header's plus the size the header records. It returns
// the file, the header and where the object's bytes start.
func (d *Dir) openObject(key string) (*os.File, dirHeader, int64, error) {
	f, err := os.Open(d.objectPath(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, dirHeader{}, 0, fmt.Errorf("%w: %s", ErrNotFound, quoteKey(key))
	}
	if err != nil {
		return nil, dirHeader{}, 0, fmt.Errorf("objectstore: opening %s: %w", quoteKey(key), err)
	}
	h, offset, err := readHeader(f)
	if err == nil && h.Key != key {
		err = fmt.Errorf("the file holds key %s", quoteKey(h.Key))
	}
	if err == nil {
		var st os.FileInfo
		if st, err = f.Stat(); err == nil && st.Size() != offset+h.Size {
			err = fmt.Errorf("the file has %d bytes, its header says %d", st.Size()-offset, h.Size)
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, dirHeader{}, 0, fmt.Errorf("objectstore: %s in %s is damaged: %w", quoteKey(key), f.Name(), err)
	}
	return f, h, offset, nil
}

func readHeaderFile(path string) (dirHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return dirHeader{}, err
	}
	defer f.Close()
	h, _, err := readHeader(f)
	if err != nil {
		return dirHeader{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// readHeader decodes the header line at the start of f and returns it
// with its length, newline included.
func readHeader(f *os.File) (dirHeader, int64, error) {
	buf := make([]byte, maxHeaderLen)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return dirHeader{}, 0, err
	}
	line, _, found := bytes.Cut(buf[:n], []byte{'\n'})
	if !found {
		return dirHeader{}, 0, errors.New("no header line")
	}
	var h dirHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return dirHeader{}, 0, fmt.Errorf("header: %w", err)
	}
	return h, int64(len(line)) + 1, nil
}

// sweepTemp removes uploads in tmp/ last written before cutoff.
func (d *Dir) sweepTemp(cutoff time.Time) error {
	tmp := filepath.Join(d.root, "tmp")
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return fmt.Errorf("objectstore: reading %s: %w", tmp, err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(tmp, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("objectstore: removing an unfinished upload: %w", err)
		}
	}
	return nil
}

func syncDir(path string) error {
	dir, err := os.Open(path)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// fileBody is an object's bytes, closing the file it reads.
type fileBody struct {
	*io.SectionReader
	f *os.File
}

func (b *fileBody) Close() error { return b.f.Close() }
