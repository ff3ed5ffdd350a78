package objectstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/pcourt/pcourt/libs/envconf"
)

// Config chooses the store: a local directory (Dir) or an S3 bucket (S3),
// exactly one of them.
type Config struct {
	// Dir is the local directory of a Dir store (EVIDENCE_STORE_DIR).
	Dir string
	S3  S3Config
}

// FromEnv reads EVIDENCE_STORE_DIR, or the bucket's EVIDENCE_S3_ENDPOINT,
// EVIDENCE_S3_BUCKET, EVIDENCE_S3_REGION, EVIDENCE_S3_ACCESS_KEY_ID,
// EVIDENCE_S3_SECRET_ACCESS_KEY, EVIDENCE_S3_TLS (default true) and
// EVIDENCE_S3_PATH_STYLE (default false). Validate says what is missing.
func FromEnv(r *envconf.Reader) Config {
	return Config{
		Dir: r.String("EVIDENCE_STORE_DIR", ""),
		S3: S3Config{
			Endpoint:        r.String("EVIDENCE_S3_ENDPOINT", ""),
			Bucket:          r.String("EVIDENCE_S3_BUCKET", ""),
			Region:          r.String("EVIDENCE_S3_REGION", ""),
			AccessKeyID:     r.String("EVIDENCE_S3_ACCESS_KEY_ID", ""),
			SecretAccessKey: r.Secret("EVIDENCE_S3_SECRET_ACCESS_KEY"),
			UseTLS:          r.Bool("EVIDENCE_S3_TLS", true),
			PathStyle:       r.Bool("EVIDENCE_S3_PATH_STYLE", false),
		},
	}
}

// s3Named reports whether any setting of the bucket is given; TLS and
// path style, which have defaults, do not count.
func (c Config) s3Named() bool {
	s := c.S3
	return s.Endpoint != "" || s.Bucket != "" || s.Region != "" || s.AccessKeyID != "" || s.SecretAccessKey != ""
}

// Validate reports a configuration naming no store, both, or half a
// bucket.
func (c Config) Validate() error {
	switch {
	case c.Dir == "" && !c.s3Named():
		return errors.New("objectstore: no evidence store: set EVIDENCE_STORE_DIR (a local directory) or EVIDENCE_S3_ENDPOINT, EVIDENCE_S3_BUCKET and its credentials")
	case c.Dir != "" && c.s3Named():
		return errors.New("objectstore: EVIDENCE_STORE_DIR and EVIDENCE_S3_* are both set: choose the directory or the bucket")
	case c.Dir != "":
		return nil
	}
	return c.S3.Validate()
}

// New opens the configured store: NewDir or NewS3, which checks that the
// bucket exists.
func New(ctx context.Context, c Config) (Store, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Dir != "" {
		d, err := NewDir(c.Dir)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	s, err := NewS3(ctx, c.S3)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Describe says where the store is, for the start-up log line; it never
// shows a credential.
func (c Config) Describe() string {
	if c.Dir != "" {
		return "directory " + c.Dir
	}
	scheme := "https"
	if !c.S3.UseTLS {
		scheme = "http"
	}
	return fmt.Sprintf("bucket %s at %s://%s", c.S3.Bucket, scheme, c.S3.Endpoint)
}
