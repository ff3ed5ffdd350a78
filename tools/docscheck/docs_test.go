// Package docscheck keeps the documentation's indexes equal to the tree, as
// the problem catalogue is kept equal to the codes: a newcomer who follows
// docs/README.md to a service's README finds every page and every package
// where they say, and nothing they name is missing.
package docscheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const root = "../.."

// services are the folders of services/ that hold a Go module.
func services(t *testing.T) []string {
	t.Helper()
	dirs, err := os.ReadDir(filepath.Join(root, "services"))
	require.NoError(t, err)
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(root, "services", d.Name(), "go.mod")); err == nil {
			out = append(out, d.Name())
		}
	}
	return out
}

// section is the text of the markdown section under heading, up to the
// next heading of the same or a higher level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	level := strings.Count(strings.Fields(heading)[0], "#")
	var b strings.Builder
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "#") {
			l := len(line) - len(strings.TrimLeft(line, "#"))
			if in && l <= level {
				break
			}
			if line == heading {
				in = true
				continue
			}
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	require.True(t, in, "no section %q", heading)
	return b.String()
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	require.NoError(t, err)
	return string(b)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

func matches(re *regexp.Regexp, text string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return sorted(out)
}

func TestTheDocsIndexListsEveryPageOnce(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	var want []string
	for _, p := range pages {
		if name := filepath.Base(p); name != "README.md" {
			want = append(want, name)
		}
	}
	listed := section(t, read(t, "docs/README.md"), "## Pages")
	got := regexp.MustCompile(`(?m)^- \[[^\]]+\]\(([^)/]+\.md)\) — `).FindAllStringSubmatch(listed, -1)
	var names []string
	for _, m := range got {
		names = append(names, m[1])
	}
	require.Equal(t, sorted(want), names, "docs/README.md's Pages: one line per page of docs/, in file order")
}

func TestEveryServiceIsListedAndHasAReadme(t *testing.T) {
	want := services(t)
	index := section(t, read(t, "docs/README.md"), "## Services")
	require.Equal(t, want, matches(regexp.MustCompile(`\(\.\./services/([a-z-]+)/README\.md\)`), index), "docs/README.md's Services")
	top := section(t, read(t, "README.md"), "## Architecture")
	require.Equal(t, want, matches(regexp.MustCompile("(?m)^\\| `services/([a-z-]+)` \\|"), top), "the README's table of services")
	for _, s := range want {
		_, err := os.Stat(filepath.Join(root, "services", s, "README.md"))
		require.NoError(t, err, "services/%s has no README.md", s)
	}
}

// TestEveryServiceReadmeNamesItsPackages holds each service README's
// "## Packages" section to the packages the service has: every package
// named (a backquoted path such as `internal/store`, `cmd/cases`) exists,
// and every package of the module is named.
func TestEveryServiceReadmeNamesItsPackages(t *testing.T) {
	named := regexp.MustCompile("`((?:cmd|internal|api)(?:/[a-z0-9_-]+)*)`")
	for _, s := range services(t) {
		t.Run(s, func(t *testing.T) {
			dir := filepath.Join(root, "services", s)
			var have []string
			err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() && (d.Name() == "testdata" || d.Name() == "static" || d.Name() == "templates") {
					return filepath.SkipDir
				}
				if !d.IsDir() && strings.HasSuffix(path, ".go") {
					rel, err := filepath.Rel(dir, filepath.Dir(path))
					if err != nil {
						return err
					}
					if rel != "." {
						have = append(have, filepath.ToSlash(rel))
					}
				}
				return nil
			})
			require.NoError(t, err)
			readme := read(t, filepath.Join("services", s, "README.md"))
			require.Equal(t, sorted(have), matches(named, section(t, readme, "## Packages")),
				"services/%s/README.md's Packages must name every package of the module and no other", s)
		})
	}
}
