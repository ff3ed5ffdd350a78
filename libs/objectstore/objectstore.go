// Package objectstore keeps immutable files (case evidence) by key, in a
// bucket through the S3 API in production or in a local directory for
// `make run`. Redis keeps the metadata and digests; the bytes live here.
//
// Both implementations keep one promise a caller builds on: Put stores
// exactly the bytes it was told to or nothing. A reader that ends early,
// runs on past its declared size or fails midway leaves no object, not
// even briefly, so a key that Keys or Stat reports always holds a whole
// file. libs/objectstore/s3test runs a real S3-compatible server for the
// tests; one contract test suite holds Dir and S3 to the same behaviour.
package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"unicode/utf8"
)

// Store keeps immutable objects by key.
type Store interface {
	// Put stores exactly size bytes read from r under key, with
	// contentType. If r yields fewer or more bytes, or fails, nothing is
	// stored under key (no partial object is ever visible), and the error
	// says why. A Put to a key that exists replaces the object whole;
	// callers keep objects immutable by never reusing a key.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Open streams the object; ErrNotFound when absent. The caller closes
	// the body.
	Open(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// Stat describes the object; ErrNotFound when absent.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes the object; absent is not an error.
	Delete(ctx context.Context, key string) error
	// Keys lists keys under a prefix in lexical order (tests and operators
	// use it to prove nothing half-stored is left).
	Keys(ctx context.Context, prefix string) ([]string, error)
}

// Info describes a stored object.
type Info struct {
	Size        int64
	ContentType string
}

var (
	// ErrNotFound is returned by Open and Stat for a key with no object.
	ErrNotFound = errors.New("objectstore: no object under this key")
	// ErrInvalidKey is wrapped by every refusal of a key or prefix.
	ErrInvalidKey = errors.New("objectstore: invalid key")
	// ErrInvalidObject is wrapped by a refusal of a Put's size or content
	// type, before anything is read.
	ErrInvalidObject = errors.New("objectstore: invalid object")
	// ErrSizeMismatch is wrapped when a Put's reader yields fewer or more
	// bytes than its declared size; nothing was stored.
	ErrSizeMismatch = errors.New("objectstore: reader size differs from the declared size")
)

// MaxKeyLen is the longest key in bytes: within S3's 1024, and leaving
// room for the prefixes an operator's bucket policy may add.
const MaxKeyLen = 512

// maxContentTypeLen bounds the content type, which Dir keeps in each
// file's header line and S3 in a header.
const maxContentTypeLen = 255

// ValidateKey refuses a key that is empty, longer than MaxKeyLen bytes,
// not UTF-8, absolute (a leading "/"), has an empty, "." or ".." segment
// (so "a//b", "a/./b" and a trailing "/" too) or a control character. The
// segment rules matter because HTTP clients and proxies normalise such
// paths, so the key an S3 server sees would not be the key the caller
// gave; a key the store accepts is one every implementation keeps as is.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: the key is empty", ErrInvalidKey)
	}
	if err := validatePrefix(key); err != nil {
		return err
	}
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: %s has an empty segment (a leading, doubled or trailing /)", ErrInvalidKey, quoteKey(key))
		case ".", "..":
			return fmt.Errorf("%w: %s has a %q segment", ErrInvalidKey, quoteKey(key), seg)
		}
	}
	return nil
}

// validatePrefix applies the rules a partial key can already break: Keys
// takes any prefix of a valid key, including "" and one ending in "/".
func validatePrefix(p string) error {
	if len(p) > MaxKeyLen {
		return fmt.Errorf("%w: %d bytes, longer than %d", ErrInvalidKey, len(p), MaxKeyLen)
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("%w: %s is not UTF-8", ErrInvalidKey, quoteKey(p))
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: %s is absolute (starts with /)", ErrInvalidKey, quoteKey(p))
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: %s has a control character", ErrInvalidKey, quoteKey(p))
		}
	}
	return nil
}

// quoteKey shows a key in an error: quoted, so control characters show as
// escapes, and cut short, so a refused long key does not flood a log.
func quoteKey(k string) string {
	if len(k) > 80 {
		return fmt.Sprintf("%q…", k[:80])
	}
	return fmt.Sprintf("%q", k)
}

// validateObject checks a Put's declared size and content type.
func validateObject(size int64, contentType string) error {
	if size < 0 {
		return fmt.Errorf("%w: size %d is negative", ErrInvalidObject, size)
	}
	if contentType == "" {
		return fmt.Errorf("%w: the content type is empty (application/octet-stream when unknown)", ErrInvalidObject)
	}
	if len(contentType) > maxContentTypeLen {
		return fmt.Errorf("%w: the content type is %d bytes, longer than %d", ErrInvalidObject, len(contentType), maxContentTypeLen)
	}
	if _, _, err := mime.ParseMediaType(contentType); err != nil {
		return fmt.Errorf("%w: content type %q: %v", ErrInvalidObject, contentType, err)
	}
	return nil
}

// exactReader yields exactly size bytes of r, or fails: with
// ErrSizeMismatch when r ends early or has more, with r's own error when r
// fails. It withholds the bytes of the read that reaches size until it has
// read on and found r's end, so a consumer that stops at size bytes (an
// HTTP request of that Content-Length) never completes an upload from a
// longer source: the last bytes never reach it. A failing read likewise
// hands over nothing of that read.
type exactReader struct {
	ctx  context.Context
	r    io.Reader
	size int64
	left int64
	// ended records that r was read to its end at exactly size bytes.
	ended bool
}

func newExactReader(ctx context.Context, r io.Reader, size int64) *exactReader {
	return &exactReader{ctx: ctx, r: r, size: size, left: size}
}

func (e *exactReader) Read(p []byte) (int, error) {
	if err := e.ctx.Err(); err != nil {
		return 0, err
	}
	if e.left == 0 {
		if err := e.proveEnd(); err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		return 0, fmt.Errorf("reading the object after %d of %d bytes: %w", e.size-e.left, e.size, err)
	case e.left == 0:
		if err := e.proveEnd(); err != nil {
			return 0, err
		}
		return n, nil
	case err != nil: // io.EOF before size bytes
		return 0, fmt.Errorf("%w: the reader ended after %d of %d bytes", ErrSizeMismatch, e.size-e.left, e.size)
	}
	return n, nil
}

// proveEnd reads on past size bytes: r must be at its end.
func (e *exactReader) proveEnd() error {
	if e.ended {
		return nil
	}
	var b [1]byte
	// A reader may return 0, nil a few times; io.ReadFull's neighbours
	// in the standard library give up after 100 such reads too.
	for range 100 {
		n, err := e.r.Read(b[:])
		if n > 0 {
			return fmt.Errorf("%w: the reader has more than %d bytes", ErrSizeMismatch, e.size)
		}
		if errors.Is(err, io.EOF) {
			e.ended = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the object's end after %d bytes: %w", e.size, err)
		}
	}
	return fmt.Errorf("reading the object's end after %d bytes: %w", e.size, io.ErrNoProgress)
}
