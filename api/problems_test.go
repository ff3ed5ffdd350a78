package api_test

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/pcourt/pcourt/api"
)

// documentedCodes reads the code rows of docs/problems.md: code → status,
// failing on a code documented with two statuses (a code is always sent
// with the same one, whoever owns it).
func documentedCodes(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open("../docs/problems.md")
	require.NoError(t, err)
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z][a-z0-9_]*)` \\| ([0-9]{3}) \\| ([a-z0-9-]+) \\| ")
	codes := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		status, _ := strconv.Atoi(m[2])
		if prev, ok := codes[m[1]]; ok && prev != status {
			t.Errorf("docs/problems.md:%d: %s with %d, elsewhere with %d", n, m[1], status, prev)
		}
		codes[m[1]] = status
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, codes)
	return codes
}

// Every code of docs/problems.md is in the document's x-problem-codes with
// the same status, and the document lists no code the page does not.
func TestProblemCodesMatchTheDocs(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				Problem struct {
					Codes map[string]int `json:"x-problem-codes"`
				} `json:"Problem"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, yaml.Unmarshal(api.YAML, &doc))
	inDoc := doc.Components.Schemas.Problem.Codes
	var errs []string
	for code, status := range documentedCodes(t) {
		got, ok := inDoc[code]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("%s (%d) is in docs/problems.md but not in x-problem-codes", code, status))
		case got != status:
			errs = append(errs, fmt.Sprintf("%s is %d in docs/problems.md but %d in x-problem-codes", code, status, got))
		}
	}
	docs := documentedCodes(t)
	for code := range inDoc {
		if _, ok := docs[code]; !ok {
			errs = append(errs, fmt.Sprintf("%s is in x-problem-codes but not in docs/problems.md", code))
		}
	}
	sort.Strings(errs)
	require.Empty(t, errs, strings.Join(errs, "\n"))
}
