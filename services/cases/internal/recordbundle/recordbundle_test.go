package recordbundle_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/recordbundle"
)

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func bundle(t *testing.T, exhibit []byte, recorded string) ([]byte, error) {
	t.Helper()
	parts := []recordbundle.Part{
		recordbundle.Bytes("summary.json", "application/json", []byte(`{"caseId":"cs_1"}`)),
		recordbundle.Stored("exhibits/exh_1/photo.png", "image/png", int64(len(exhibit)), recorded, func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(exhibit)), nil
		}),
	}
	m, err := recordbundle.ManifestBytes(recordbundle.Manifest{CaseID: "cs_1"}, parts)
	require.NoError(t, err)
	var out bytes.Buffer
	err = recordbundle.Write(&out, m, "h..s", parts, time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	return out.Bytes(), err
}

func TestTheBundleIsReproducibleAndItsManifestNamesEveryFile(t *testing.T) {
	exhibit := []byte("\x89PNG pretend")
	first, err := bundle(t, exhibit, digest(exhibit))
	require.NoError(t, err)
	second, err := bundle(t, exhibit, digest(exhibit))
	require.NoError(t, err)
	require.Equal(t, first, second, "the same record gives the same bytes")

	zr, err := zip.NewReader(bytes.NewReader(first), int64(len(first)))
	require.NoError(t, err)
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = b
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"manifest.json", "manifest.jws", "summary.json", "exhibits/exh_1/photo.png"}, names)
	var m recordbundle.Manifest
	require.NoError(t, json.Unmarshal(files["manifest.json"], &m))
	require.Equal(t, recordbundle.SchemaVersion, m.SchemaVersion)
	for _, e := range m.Files {
		require.Equal(t, e.SHA256, digest(files[e.Path]), e.Path)
		require.EqualValues(t, e.Size, len(files[e.Path]), e.Path)
	}
}

func TestAStoredFileThatIsNotTheRecordsFailsTheBundle(t *testing.T) {
	_, err := bundle(t, []byte("altered bytes"), digest([]byte("the bytes the record names")))
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "the record says"), err.Error())
}
