package httpapi_test

import (
	"testing"

	"github.com/pcourt/pcourt/libs/objectstore/s3test"
)

// TestMain stops the S3 test server (SeaweedFS) the bucket test starts,
// once every test of the package ran.
func TestMain(m *testing.M) { s3test.Main(m) }
