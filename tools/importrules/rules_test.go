package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTheRepositoryKeepsItsImportRules runs the check over this repository.
func TestTheRepositoryKeepsItsImportRules(t *testing.T) {
	var out, errs bytes.Buffer
	code := run(filepath.Join("..", ".."), &out, &errs)
	require.Equal(t, 0, code, "violations:\n%s%s", out.String(), errs.String())
}

// write creates a Go file at rel under root importing imports.
func write(t *testing.T, root, rel string, imports ...string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	var b strings.Builder
	b.WriteString("package p\n\nimport (\n")
	for _, imp := range imports {
		b.WriteString("\t_ \"" + imp + "\"\n")
	}
	b.WriteString(")\n")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

// writeMod creates the go.mod at rel under root, requiring the webhooks
// service's module.
func writeMod(t *testing.T, root, rel string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	mod := "module " + Module + "/" + strings.TrimSuffix(rel, "/go.mod") + "\n\ngo 1.26.0\n\nrequire " + Module + "/services/webhooks v0.0.0\n"
	require.NoError(t, os.WriteFile(path, []byte(mod), 0o644))
}

func TestEachRuleCatchesItsViolation(t *testing.T) {
	tests := []struct {
		name  string
		files map[string][]string
		// pending, when set, stands for Pending during the case.
		pending []Violation
		want    []string
	}{
		{
			name:  "a service imports another service",
			files: map[string][]string{"services/cases/internal/store/s.go": {Module + "/services/filings/internal/draft"}},
			want:  []string{"services/cases/internal/store imports " + Module + "/services/filings/internal/draft: services never import each other"},
		},
		{
			name:  "libs import a service",
			files: map[string][]string{"libs/auth/a.go": {Module + "/services/filings/internal/store"}},
			want:  []string{"libs/auth imports " + Module + "/services/filings/internal/store: libs import no service"},
		},
		{
			name:  "a tool imports a service",
			files: map[string][]string{"tools/demo/main.go": {Module + "/services/readiness/internal/readiness"}},
			want:  []string{"tools/demo imports " + Module + "/services/readiness/internal/readiness: tools reach services over HTTP and Kafka, never by import"},
		},
		{
			name:  "a domain imports Gin",
			files: map[string][]string{"services/filings/internal/draft/d.go": {"github.com/gin-gonic/gin"}},
			want:  []string{"services/filings/internal/draft imports github.com/gin-gonic/gin: a pure domain imports no Gin, Redis, Kafka or HTTP"},
		},
		{
			name: "a domain reaches Redis through a lib",
			files: map[string][]string{
				"services/filings/internal/draft/d.go": {Module + "/libs/auth"},
				"libs/auth/a.go":                       {"github.com/redis/go-redis/v9"},
			},
			want: []string{"services/filings/internal/draft imports github.com/redis/go-redis/v9: a pure domain imports no Gin, Redis, Kafka or HTTP (through libs/auth)"},
		},
		{
			name: "a domain's tests may use adapters, and own-service imports are allowed",
			files: map[string][]string{
				"services/filings/internal/httpapi/h.go":      {Module + "/services/filings/internal/draft", "github.com/gin-gonic/gin"},
				"services/filings/internal/draft/d.go":        {"encoding/json", Module + "/libs/jcs"},
				"libs/jcs/j.go":                               {"bytes"},
				"services/filings/internal/draft/d_test.go":   {"github.com/redis/go-redis/v9"},
				"services/filings/internal/httpapi/x_test.go": {Module + "/services/filings/internal/draft"},
			},
		},
		{
			name:  "a service's test imports another service",
			files: map[string][]string{"services/filings/internal/httpapi/x_test.go": {Module + "/services/readiness/webhookstest"}},
			want:  []string{"services/filings/internal/httpapi imports " + Module + "/services/readiness/webhookstest: services never import each other, tests included"},
		},
		{
			name:  "a tool's test imports a service",
			files: map[string][]string{"tools/e2e/x_test.go": {Module + "/services/cases/internal/store"}},
			want:  []string{"tools/e2e imports " + Module + "/services/cases/internal/store: tools reach services over HTTP and Kafka, never by import, tests included"},
		},
		{
			name:  "a service module requires another",
			files: map[string][]string{"services/filings/go.mod": nil},
			want:  []string{"services/filings/go.mod imports " + Module + "/services/webhooks: a service module requires no other service module"},
		},
		{
			name:    "a pending entry whose violation is gone",
			files:   map[string][]string{"services/compat-edge/internal/console/c.go": {"fmt"}},
			pending: []Violation{{Package: "services/compat-edge/internal/console", Import: Module + "/services/webhooks/webhookstest", Rule: "services never import each other, tests included"}},
			want:    []string{"services/compat-edge/internal/console imports " + Module + "/services/webhooks/webhookstest: listed in importrules.Pending but no longer found: remove the entry"},
		},
		{
			name:    "a pending violation is not reported",
			files:   map[string][]string{"services/compat-edge/internal/console/c_test.go": {Module + "/services/webhooks/webhookstest"}},
			pending: []Violation{{Package: "services/compat-edge/internal/console", Import: Module + "/services/webhooks/webhookstest", Rule: "services never import each other, tests included"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, imports := range tt.files {
				if strings.HasSuffix(rel, "go.mod") {
					writeMod(t, root, rel)
					continue
				}
				write(t, root, rel, imports...)
			}
			if tt.pending != nil {
				kept := Pending
				Pending = tt.pending
				t.Cleanup(func() { Pending = kept })
			}
			violations, err := Check(root)
			require.NoError(t, err)
			got := make([]string, 0, len(violations))
			for _, v := range violations {
				got = append(got, v.String())
			}
			if tt.want == nil {
				tt.want = []string{}
			}
			require.Equal(t, tt.want, got)
			var out, errs bytes.Buffer
			code := run(root, &out, &errs)
			if len(tt.want) > 0 {
				require.Equal(t, 1, code)
			} else {
				require.Equal(t, 0, code)
			}
		})
	}
}

func TestModulesThatRequireADependencyAtTwoVersionsAreReported(t *testing.T) {
	root := t.TempDir()
	for rel, version := range map[string]string{"libs": "v0.48.0", "tools": "v0.49.0", "services/cases": "v0.49.0"} {
		path := filepath.Join(root, filepath.FromSlash(rel), "go.mod")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		mod := "module " + Module + "/" + rel + "\n\ngo 1.26.0\n\nrequire golang.org/x/sys " + version + " // indirect\n"
		require.NoError(t, os.WriteFile(path, []byte(mod), 0o644))
	}
	violations, err := Check(root)
	require.NoError(t, err)
	require.Len(t, violations, 1)
	require.Equal(t, "libs/go.mod imports golang.org/x/sys@v0.48.0: every module requires a dependency at one version: services/cases/go.mod requires v0.49.0", violations[0].String())
}
