package objectstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/libs/objectstore/s3test"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var fullBucket = map[string]string{
	"EVIDENCE_S3_ENDPOINT":          "s3.eu-west-1.amazonaws.com",
	"EVIDENCE_S3_BUCKET":            "pcourt-evidence",
	"EVIDENCE_S3_REGION":            "eu-west-1",
	"EVIDENCE_S3_ACCESS_KEY_ID":     "AKIAEXAMPLE",
	"EVIDENCE_S3_SECRET_ACCESS_KEY": "s3cr3t-key",
}

func with(base map[string]string, changes ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i < len(changes); i += 2 {
		if changes[i+1] == "" {
			delete(out, changes[i])
		} else {
			out[changes[i]] = changes[i+1]
		}
	}
	return out
}

func TestConfigFromEnv(t *testing.T) {
	r := envconf.New(env(fullBucket))
	c := objectstore.FromEnv(r)
	require.NoError(t, r.Err())
	require.NoError(t, c.Validate())
	assert.Equal(t, objectstore.S3Config{
		Endpoint: "s3.eu-west-1.amazonaws.com", Bucket: "pcourt-evidence", Region: "eu-west-1",
		AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "s3cr3t-key", UseTLS: true,
	}, c.S3, "TLS unless told otherwise")
	assert.Empty(t, c.Dir)

	r = envconf.New(env(with(fullBucket, "EVIDENCE_S3_TLS", "false", "EVIDENCE_S3_PATH_STYLE", "true")))
	c = objectstore.FromEnv(r)
	assert.False(t, c.S3.UseTLS)
	assert.True(t, c.S3.PathStyle)

	r = envconf.New(env(with(fullBucket, "EVIDENCE_S3_TLS", "perhaps")))
	objectstore.FromEnv(r)
	require.ErrorContains(t, r.Err(), "EVIDENCE_S3_TLS")

	c = objectstore.FromEnv(envconf.New(env(map[string]string{"EVIDENCE_STORE_DIR": "/var/lib/pcourt-evidence"})))
	require.NoError(t, c.Validate())
	assert.Equal(t, "/var/lib/pcourt-evidence", c.Dir)
}

// Each refusal names what to set.
func TestConfigRefusesNoneBothAndHalf(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want []string
	}{
		"nothing":                 {map[string]string{}, []string{"EVIDENCE_STORE_DIR", "EVIDENCE_S3_ENDPOINT"}},
		"only the TLS default":    {map[string]string{"EVIDENCE_S3_TLS": "true"}, []string{"no evidence store"}},
		"a directory and bucket":  {with(fullBucket, "EVIDENCE_STORE_DIR", "/data"), []string{"both set"}},
		"a directory and one key": {map[string]string{"EVIDENCE_STORE_DIR": "/data", "EVIDENCE_S3_BUCKET": "b"}, []string{"both set"}},
		"no endpoint":             {with(fullBucket, "EVIDENCE_S3_ENDPOINT", ""), []string{"EVIDENCE_S3_ENDPOINT is required"}},
		"no bucket":               {with(fullBucket, "EVIDENCE_S3_BUCKET", ""), []string{"EVIDENCE_S3_BUCKET is required"}},
		"a key id without secret": {with(fullBucket, "EVIDENCE_S3_SECRET_ACCESS_KEY", ""), []string{"EVIDENCE_S3_SECRET_ACCESS_KEY is required"}},
		"a secret without key id": {with(fullBucket, "EVIDENCE_S3_ACCESS_KEY_ID", ""), []string{"EVIDENCE_S3_ACCESS_KEY_ID is required"}},
		"only an endpoint": {map[string]string{"EVIDENCE_S3_ENDPOINT": "minio:9000"},
			[]string{"EVIDENCE_S3_BUCKET", "EVIDENCE_S3_ACCESS_KEY_ID", "EVIDENCE_S3_SECRET_ACCESS_KEY"}},
		"an endpoint with a scheme": {with(fullBucket, "EVIDENCE_S3_ENDPOINT", "https://s3.amazonaws.com"), []string{"not host[:port]", "EVIDENCE_S3_TLS"}},
		"an endpoint with a path":   {with(fullBucket, "EVIDENCE_S3_ENDPOINT", "minio:9000/pcourt"), []string{"not host[:port]"}},
		"a malformed bucket name":   {with(fullBucket, "EVIDENCE_S3_BUCKET", "Evidence_Bucket"), []string{"EVIDENCE_S3_BUCKET=\"Evidence_Bucket\""}},
	} {
		t.Run(name, func(t *testing.T) {
			c := objectstore.FromEnv(envconf.New(env(tc.env)))
			err := c.Validate()
			require.Error(t, err)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
			assert.NotContains(t, err.Error(), "s3cr3t-key")
			_, err = objectstore.New(context.Background(), c)
			require.Error(t, err, "New validates too")
		})
	}
}

func TestConfigNeverPrintsTheSecret(t *testing.T) {
	c := objectstore.FromEnv(envconf.New(env(fullBucket)))
	js, err := json.Marshal(c)
	require.NoError(t, err)
	for _, out := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), string(js), c.Describe()} {
		assert.NotContains(t, out, "s3cr3t-key")
	}
	assert.Equal(t, "bucket pcourt-evidence at https://s3.eu-west-1.amazonaws.com", c.Describe())
}

func TestNewOpensADirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "evidence")
	s, err := objectstore.New(context.Background(), objectstore.Config{Dir: dir})
	require.NoError(t, err)
	require.IsType(t, &objectstore.Dir{}, s)
	require.NoError(t, s.Put(context.Background(), "k", strings.NewReader("v"), 1, "text/plain"))
	assert.DirExists(t, filepath.Join(dir, "objects"), "the directory is made when absent")
}

// A bucket that does not exist stops the start: the store never makes one.
func TestNewS3RefusesAMissingBucket(t *testing.T) {
	srv := s3test.Start(t)
	cfg := srv.NewBucket(t)
	cfg.Bucket = "pcourt-never-made"
	_, err := objectstore.New(context.Background(), objectstore.Config{S3: cfg})
	require.ErrorContains(t, err, `bucket "pcourt-never-made" does not exist`)
	ok, err := srv.Client.BucketExists(context.Background(), "pcourt-never-made")
	require.NoError(t, err)
	assert.False(t, ok, "checking made no bucket")
}

func TestNewS3RefusesWrongCredentials(t *testing.T) {
	cfg := s3test.Start(t).NewBucket(t)
	cfg.SecretAccessKey = "not-the-secret"
	_, err := objectstore.NewS3(context.Background(), cfg)
	require.Error(t, err)
	assert.ErrorContains(t, err, cfg.Bucket)
	assert.NotContains(t, err.Error(), "not-the-secret")
}
