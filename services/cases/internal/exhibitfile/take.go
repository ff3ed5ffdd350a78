package exhibitfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
)

// bufferSize is the one buffer an upload streams through: memory per upload
// is this, not the file's size.
const bufferSize = 32 << 10

// File is an upload that passed every check, spooled on local disk. The
// caller hands it to the object store (Reader and Size) and then Closes it,
// which removes the spool file; a File is never stored partially, because
// it exists only once the whole upload has been read and checked.
type File struct {
	// Name is the file name as uploaded, checked (see checkName).
	Name string
	// MediaType is the checked type, without parameters: one of the
	// policy's allowlist.
	MediaType string
	// Size is the file's length in bytes.
	Size int64
	// SHA256 is the lowercase hex SHA-256 of the file's bytes.
	SHA256 string
	// Processing is what was read from the file: its text, page count and a
	// suggested description.
	Processing Processing

	spool *os.File
}

// Reader returns a reader of the whole file from its first byte. Each call
// returns a new, independent reader (a *io.SectionReader is an io.Reader,
// io.Seeker and io.ReaderAt, and knows its Size), so a failed store attempt
// can start again.
func (f *File) Reader() *io.SectionReader { return io.NewSectionReader(f.spool, 0, f.Size) }

// Close removes the spool file. It is safe to call more than once.
func (f *File) Close() error {
	if f.spool == nil {
		return nil
	}
	path := f.spool.Name()
	closeErr := f.spool.Close()
	f.spool = nil
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing spool file: %w", err)
	}
	return closeErr
}

// Take spools r into dir and checks it. declaredType is the multipart part's
// Content-Type, fileName its file name.
//
// On success the caller owns the returned *File and must Close it. On any
// refusal (a *Refusal, with the codes in Codes, in their order) and on any
// other error nothing is left in dir. Other errors are the machine's: a
// policy that does not validate, a spool directory that cannot be written.
//
// The bytes go through one 32 KiB buffer into the spool file and the hash at
// once; reading stops at MaxFileBytes+1. A reader error of any kind (a
// client that hung up gives io.ErrUnexpectedEOF from the multipart reader)
// is an incomplete upload, except an *http.MaxBytesError: a body cut off by
// the server's own limit is a file too large. The checks then read the
// spool file in bounded pieces (see check).
func Take(dir string, r io.Reader, declaredType, fileName string, p Policy) (*File, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if ref := checkName(fileName); ref != nil {
		return nil, ref
	}
	spool, err := os.CreateTemp(dir, "exhibit-*.spool")
	if err != nil {
		return nil, fmt.Errorf("creating spool file: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			spool.Close()
			os.Remove(spool.Name())
		}
	}()

	sum := sha256.New()
	size, err := spoolFrom(spool, sum, r, p.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, refuse(CodeEmpty, "the file is empty")
	}
	mediaType, err := check(spool, size, declaredType, p)
	if err != nil {
		return nil, err
	}
	processing, err := process(spool, size, mediaType, fileName)
	if err != nil {
		return nil, err
	}
	kept = true
	return &File{
		Name:       fileName,
		MediaType:  string(mediaType),
		Size:       size,
		SHA256:     hex.EncodeToString(sum.Sum(nil)),
		Processing: processing,
		spool:      spool,
	}, nil
}

// spoolFrom copies r into w and sum, at most limit+1 bytes, and returns how
// many bytes the file has. It refuses a reader that fails and a file over
// limit; an error writing the spool is returned as it is.
func spoolFrom(w io.Writer, sum hash.Hash, r io.Reader, limit int64) (int64, error) {
	buf := make([]byte, bufferSize)
	var size int64
	for empty := 0; ; {
		want := int64(len(buf))
		if rest := limit + 1 - size; rest < want {
			want = rest
		}
		n, rerr := r.Read(buf[:want])
		if n > 0 {
			empty = 0
			if _, err := w.Write(buf[:n]); err != nil {
				return 0, fmt.Errorf("writing spool file: %w", err)
			}
			sum.Write(buf[:n])
			size += int64(n)
		}
		if n == 0 && rerr == nil {
			// A reader that neither reads nor ends would hold the upload
			// open for ever; io.Copy gives up the same way.
			if empty++; empty == 100 {
				rerr = io.ErrNoProgress
			}
		}
		if size > limit {
			return 0, refuse(CodeTooLarge, "the file is larger than %d bytes", limit)
		}
		switch {
		case rerr == io.EOF:
			return size, nil
		case rerr != nil:
			if _, ok := errors.AsType[*http.MaxBytesError](rerr); ok {
				return 0, refuse(CodeTooLarge, "the request is larger than the server accepts")
			}
			return 0, refuse(CodeUploadIncomplete, "the upload ended after %d bytes, before the file was complete", size)
		}
	}
}
