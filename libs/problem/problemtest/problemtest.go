// Package problemtest keeps the problem catalogues and their documentation,
// docs/problems.md, in step: a module's test hands its catalogue to
// RequireDocumented, which fails unless the page lists exactly those codes
// for that owner, each with its status.
package problemtest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pcourt/pcourt/libs/problem"
)

// Row is one documented code: a row of a table of docs/problems.md.
type Row struct {
	Code   string
	Status int
	Owner  string
	Line   int
}

// DocPath is the page, relative to the repository root.
const DocPath = "docs/problems.md"

var rowPattern = regexp.MustCompile("^\\| `([a-z][a-z0-9_]*)` \\| ([0-9]{3}) \\| ([a-z0-9-]+) \\| ")

// Documented returns every row of docs/problems.md, found above the working
// directory (a module's test runs in its package folder).
func Documented(tb testing.TB) []Row {
	tb.Helper()
	path, err := findDoc()
	if err != nil {
		tb.Fatal(err)
	}
	rows, err := parse(path)
	if err != nil {
		tb.Fatal(err)
	}
	return rows
}

// RequireDocumented fails the test unless the rows of owner in
// docs/problems.md are exactly codes, with the same statuses, and no code
// is documented twice for one owner.
func RequireDocumented(tb testing.TB, owner string, codes []problem.Code) {
	tb.Helper()
	documented := map[string]Row{}
	var errs []string
	for _, r := range Documented(tb) {
		if r.Owner != owner {
			continue
		}
		if prev, dup := documented[r.Code]; dup {
			errs = append(errs, fmt.Sprintf("%s:%d: %s is documented again (first on line %d)", DocPath, r.Line, r.Code, prev.Line))
		}
		documented[r.Code] = r
	}
	declared := map[string]problem.Code{}
	for _, c := range codes {
		if prev, dup := declared[c.Name]; dup && prev.Status != c.Status {
			errs = append(errs, fmt.Sprintf("the %s catalogue declares %s with %d and with %d", owner, c.Name, prev.Status, c.Status))
		}
		declared[c.Name] = c
		r, ok := documented[c.Name]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("%s (%d) is in the %s catalogue but not in %s under owner %s", c.Name, c.Status, owner, DocPath, owner))
		case r.Status != c.Status:
			errs = append(errs, fmt.Sprintf("%s:%d: %s is documented with %d but sent with %d", DocPath, r.Line, c.Name, r.Status, c.Status))
		}
	}
	for name, r := range documented {
		if _, ok := declared[name]; !ok {
			errs = append(errs, fmt.Sprintf("%s:%d: %s (%d, owner %s) is documented but the %s catalogue has no such code", DocPath, r.Line, name, r.Status, owner, owner))
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		tb.Fatalf("docs and the %s problem catalogue disagree:\n  %s", owner, strings.Join(errs, "\n  "))
	}
}

func findDoc() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return filepath.Join(dir, DocPath), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory: run the test inside the pcourt checkout")
		}
		dir = parent
	}
}

func parse(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []Row
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		m := rowPattern.FindStringSubmatch(sc.Text())
		if m == nil {
			if strings.HasPrefix(sc.Text(), "| `") {
				return nil, fmt.Errorf("%s:%d: a table row that is not | `code` | status | owner | when |", DocPath, n)
			}
			continue
		}
		status, _ := strconv.Atoi(m[2])
		rows = append(rows, Row{Code: m[1], Status: status, Owner: m[3], Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s has no code rows", DocPath)
	}
	return rows, nil
}
