// Package docstest reads the tables of the documents in docs/, for the
// tests that hold a document's table equal to the data it describes (an
// event table to a package's EventSpecs, a refusal table to its
// RefusalCodes). Only tests import it.
package docstest

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Table returns the rows of the Markdown table whose header line is header
// in the document at path: the lines after its separator, up to the first
// that is not a table row.
func Table(t testing.TB, path, header string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	i := slices.Index(lines, header)
	require.GreaterOrEqual(t, i, 0, "%s has no table %q", path, header)
	var rows []string
	for _, line := range lines[i+2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		rows = append(rows, line)
	}
	return rows
}
