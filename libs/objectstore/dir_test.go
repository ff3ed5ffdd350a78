package objectstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/objectstore"
)

// objectFiles lists the files under the store's objects/.
func objectFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "objects"), func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			out = append(out, p)
		}
		return err
	}))
	return out
}

// An operator reading the directory finds one file per object, its first
// line saying what it is.
func TestDirFileStartsWithItsHeader(t *testing.T) {
	root := t.TempDir()
	d, err := objectstore.NewDir(root)
	require.NoError(t, err)
	require.NoError(t, d.Put(context.Background(), "cases/c1/e1", strings.NewReader("%PDF-1.7"), 8, "application/pdf"))
	files := objectFiles(t, root)
	require.Len(t, files, 1)
	f, err := os.Open(files[0])
	require.NoError(t, err)
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	require.NoError(t, err)
	var h map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &h))
	assert.Equal(t, map[string]any{"key": "cases/c1/e1", "contentType": "application/pdf", "size": 8.0}, h)
	entries, err := os.ReadDir(filepath.Join(root, "tmp"))
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing left in tmp/")
}

// A failed put leaves nothing in tmp/ either.
func TestDirFailedPutLeavesNoTempFile(t *testing.T) {
	root := t.TempDir()
	d, err := objectstore.NewDir(root)
	require.NoError(t, err)
	err = d.Put(context.Background(), "k", strings.NewReader("short"), 10, "text/plain")
	require.ErrorIs(t, err, objectstore.ErrSizeMismatch)
	entries, err := os.ReadDir(filepath.Join(root, "tmp"))
	require.NoError(t, err)
	assert.Empty(t, entries)
	assert.Empty(t, objectFiles(t, root))
}

// What a crash leaves in tmp/ is invisible, and swept at the next start
// once it is an hour old; a younger one may be another process's upload
// in progress and stays.
func TestDirSweepsStaleUploads(t *testing.T) {
	root := t.TempDir()
	d, err := objectstore.NewDir(root)
	require.NoError(t, err)
	stale := filepath.Join(root, "tmp", "put-stale")
	fresh := filepath.Join(root, "tmp", "put-fresh")
	for _, p := range []string{stale, fresh} {
		require.NoError(t, os.WriteFile(p, []byte(`{"key":"k","contentType":"text/plain","size":1}`+"\n"), 0o600))
	}
	old := time.Now().Add(-2 * time.Hour)
	require.NoError(t, os.Chtimes(stale, old, old))
	keys, err := d.Keys(context.Background(), "")
	require.NoError(t, err)
	assert.Empty(t, keys, "an upload in progress is no object")

	_, err = objectstore.NewDir(root)
	require.NoError(t, err)
	assert.NoFileExists(t, stale)
	assert.FileExists(t, fresh)
}

// A file cut short or edited behind the store's back is reported, not
// served as a shorter object.
func TestDirReportsADamagedFile(t *testing.T) {
	root := t.TempDir()
	d, err := objectstore.NewDir(root)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, d.Put(ctx, "k", strings.NewReader("0123456789"), 10, "text/plain"))
	files := objectFiles(t, root)
	require.Len(t, files, 1)
	st, err := os.Stat(files[0])
	require.NoError(t, err)
	require.NoError(t, os.Truncate(files[0], st.Size()-3))

	_, _, err = d.Open(ctx, "k")
	require.ErrorContains(t, err, "damaged")
	require.NotErrorIs(t, err, objectstore.ErrNotFound)
	_, err = d.Stat(ctx, "k")
	require.ErrorContains(t, err, "damaged")
}

func TestNewDirRefusesAnUnusableRoot(t *testing.T) {
	_, err := objectstore.NewDir("")
	require.Error(t, err)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = objectstore.NewDir(file)
	require.ErrorContains(t, err, file)
}
