package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/pcourt/pcourt/libs/envconf"
)

// PartSize is the size of each part of a multipart upload, which S3 takes
// for objects over PartSize bytes. What minio-go holds in memory during a
// Put depends on the reader it is given:
//
//   - an io.ReaderAt that is also an io.Seeker (an *os.File: the spool
//     file a service validated the upload into) is read part by part
//     through io.SectionReader, each part streamed into its request
//     through small I/O buffers (the request signer's 64 KiB chunks, the
//     transport's), never held whole, whatever PartSize is: ten 100 MB
//     uploads at once grew the heap by 29 MiB in the tests;
//   - any other reader is read into one PartSize buffer per part, in turn:
//     PartSize bytes of heap for each Put in flight.
//
// 8 MiB keeps ten concurrent uploads from plain readers at 80 MiB, and
// objects up to 80 GB (S3 allows 10,000 parts); S3's minimum part is
// 5 MiB. minio-go's own default would be at least 16 MiB and grows with the
// object.
const PartSize = 8 << 20

// MaxObjectSize is the largest object Put accepts: 10,000 parts of
// PartSize.
const MaxObjectSize = 10_000 * PartSize

// uploadThreads is how many parts of one object go up at once when the
// reader is an io.ReaderAt (minio-go's default, named here).
const uploadThreads = 4

// S3Config locates a bucket of an S3-compatible object store.
type S3Config struct {
	// Endpoint is host[:port], without a scheme: s3.eu-west-1.amazonaws.com,
	// minio.storage:9000.
	Endpoint string
	Bucket   string
	// Region signs requests; empty asks the bucket for its location.
	Region          string
	AccessKeyID     string
	SecretAccessKey envconf.Secret
	// UseTLS connects over HTTPS (the default from the environment).
	UseTLS bool
	// PathStyle addresses the bucket as endpoint/bucket/key rather than
	// bucket.endpoint/key; false lets minio-go choose (virtual hosts for
	// AWS, paths for other endpoints).
	PathStyle bool
}

// Validate reports a missing or malformed setting, naming the variable
// that sets it.
func (c S3Config) Validate() error {
	var errs []error
	if c.Endpoint == "" {
		errs = append(errs, errors.New("EVIDENCE_S3_ENDPOINT is required"))
	} else if u, err := url.Parse("//" + c.Endpoint); err != nil || u.Host != c.Endpoint || strings.Contains(c.Endpoint, "://") {
		errs = append(errs, fmt.Errorf("EVIDENCE_S3_ENDPOINT=%q is not host[:port] (no scheme: TLS is EVIDENCE_S3_TLS)", c.Endpoint))
	}
	if c.Bucket == "" {
		errs = append(errs, errors.New("EVIDENCE_S3_BUCKET is required"))
	} else if err := s3utils.CheckValidBucketNameStrict(c.Bucket); err != nil {
		errs = append(errs, fmt.Errorf("EVIDENCE_S3_BUCKET=%q: %w", c.Bucket, err))
	}
	if c.AccessKeyID == "" {
		errs = append(errs, errors.New("EVIDENCE_S3_ACCESS_KEY_ID is required"))
	}
	if c.SecretAccessKey == "" {
		errs = append(errs, errors.New("EVIDENCE_S3_SECRET_ACCESS_KEY is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("objectstore: S3: %w", err)
	}
	return nil
}

// S3 keeps objects in one bucket through the S3 API (minio-go).
type S3 struct {
	client *minio.Client
	bucket string
}

// NewS3 connects to the bucket and checks that it exists. It never creates
// one: a production bucket is made, with its policies, by the operator;
// tests make theirs (libs/objectstore/s3test).
func NewS3(ctx context.Context, c S3Config) (*S3, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupAuto
	if c.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(c.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey.Reveal(), ""),
		Secure:       c.UseTLS,
		Region:       c.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("objectstore: S3 client for %s: %w", c.Endpoint, err)
	}
	ok, err := client.BucketExists(ctx, c.Bucket)
	if err != nil {
		return nil, fmt.Errorf("objectstore: checking bucket %q at %s: %w", c.Bucket, c.Endpoint, err)
	}
	if !ok {
		return nil, fmt.Errorf("objectstore: bucket %q does not exist at %s: create it (pcourt never creates buckets)", c.Bucket, c.Endpoint)
	}
	return &S3{client: client, bucket: c.Bucket}, nil
}

// Bucket returns the bucket's name.
func (s *S3) Bucket() string { return s.bucket }

// Put implements Store. The object becomes visible only when S3 completes
// the request (a single PUT up to PartSize, else the multipart upload's
// completion); a reader that fails, ends early or runs long fails the
// request before that, and minio-go aborts a failed multipart upload, so
// its parts are not kept either.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := validateObject(size, contentType); err != nil {
		return err
	}
	if size > MaxObjectSize {
		return fmt.Errorf("%w: %d bytes, more than the %d an upload of %d-byte parts can hold", ErrInvalidObject, size, int64(MaxObjectSize), PartSize)
	}
	body, err := s3Body(ctx, r, size)
	if err != nil {
		return fmt.Errorf("objectstore: putting %s: %w", quoteKey(key), err)
	}
	_, err = s.client.PutObject(ctx, s.bucket, key, body, size, minio.PutObjectOptions{
		ContentType: contentType,
		PartSize:    PartSize,
		NumThreads:  uploadThreads,
	})
	// The reader's own failure is the cause to report: minio-go may have
	// wrapped it, or reported only the request it broke.
	if ferr := body.failure(); ferr != nil {
		return fmt.Errorf("objectstore: putting %s: %w", quoteKey(key), ferr)
	}
	if err != nil {
		return fmt.Errorf("objectstore: putting %s in bucket %s: %w", quoteKey(key), s.bucket, err)
	}
	return nil
}

// Open implements Store.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if err := ValidateKey(key); err != nil {
		return nil, Info{}, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, Info{}, s.objectError("opening", key, err)
	}
	// GetObject sends nothing until asked; Stat makes the request, whose
	// body the reads then consume.
	st, err := obj.Stat()
	if err != nil {
		_ = obj.Close()
		return nil, Info{}, s.objectError("opening", key, err)
	}
	return obj, Info{Size: st.Size, ContentType: st.ContentType}, nil
}

// Stat implements Store.
func (s *S3) Stat(ctx context.Context, key string) (Info, error) {
	if err := ValidateKey(key); err != nil {
		return Info{}, err
	}
	st, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Info{}, s.objectError("describing", key, err)
	}
	return Info{Size: st.Size, ContentType: st.ContentType}, nil
}

// Delete implements Store. S3 answers a delete of an absent key with
// success.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s.objectError("deleting", key, err)
	}
	return nil
}

// Keys implements Store. S3 lists in UTF-8 byte order already; the sort
// holds a server that does not to the contract.
func (s *S3) Keys(ctx context.Context, prefix string) ([]string, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the lister if we return early
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("objectstore: listing %s in bucket %s: %w", quoteKey(prefix), s.bucket, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	slices.Sort(keys)
	return keys, nil
}

func (s *S3) objectError(doing, key string, err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == minio.NoSuchKey || (resp.StatusCode == http.StatusNotFound && resp.Code != minio.NoSuchBucket) {
		return fmt.Errorf("%w: %s", ErrNotFound, quoteKey(key))
	}
	return fmt.Errorf("objectstore: %s %s in bucket %s: %w", doing, quoteKey(key), s.bucket, err)
}

// uploadBody is the reader handed to minio-go, remembering why it failed.
type uploadBody interface {
	io.Reader
	failure() error
}

// s3Body returns what PutObject reads. A reader with ReadAt and Seek is
// checked to hold exactly size bytes from its current offset, then handed
// over as a section minio-go reads part by part without buffering; any
// other reader goes through exactReader, which fails the request on a
// size mismatch before the last byte is sent.
func s3Body(ctx context.Context, r io.Reader, size int64) (uploadBody, error) {
	ra, isReaderAt := r.(io.ReaderAt)
	seeker, isSeeker := r.(io.Seeker)
	if !isReaderAt || !isSeeker {
		e := &recordingReader{r: newExactReader(ctx, r, size)}
		if size == 0 {
			// An empty body is never read: prove the reader is empty now.
			if _, err := e.Read(nil); err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
		}
		return e, nil
	}
	off, err := seeker.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("finding the reader's offset: %w", err)
	}
	if err := checkSectionSize(ra, off, size); err != nil {
		return nil, err
	}
	return &sectionBody{SectionReader: io.NewSectionReader(ra, off, size)}, nil
}

// checkSectionSize proves ra holds byte off+size-1 and nothing at off+size.
// The spool file it is meant for is written once before the Put; a source
// that shrinks during the upload fails the part that reads past its end,
// and one that grows has the rest ignored.
func checkSectionSize(ra io.ReaderAt, off, size int64) error {
	var b [1]byte
	if size > 0 {
		n, err := ra.ReadAt(b[:], off+size-1)
		if n == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: the reader has fewer than %d bytes", ErrSizeMismatch, size)
			}
			return fmt.Errorf("reading byte %d of the object: %w", size, err)
		}
	}
	n, err := ra.ReadAt(b[:], off+size)
	if n > 0 {
		return fmt.Errorf("%w: the reader has more than %d bytes", ErrSizeMismatch, size)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading past byte %d of the object: %w", size, err)
	}
	return nil
}

// recordingReader remembers the first error of the reader it wraps.
type recordingReader struct {
	r   io.Reader
	err error
}

func (b *recordingReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *recordingReader) failure() error { return b.err }

// sectionBody is a section of the caller's reader, remembering the first
// read error; minio-go reads its parts concurrently through ReadAt.
type sectionBody struct {
	*io.SectionReader
	mu  sync.Mutex
	err error
}

func (b *sectionBody) Read(p []byte) (int, error) {
	n, err := b.SectionReader.Read(p)
	b.record(err)
	return n, err
}

func (b *sectionBody) ReadAt(p []byte, off int64) (int, error) {
	n, err := b.SectionReader.ReadAt(p, off)
	b.record(err)
	return n, err
}

func (b *sectionBody) record(err error) {
	if err == nil || errors.Is(err, io.EOF) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = fmt.Errorf("reading the object: %w", err)
	}
}

func (b *sectionBody) failure() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
