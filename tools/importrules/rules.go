package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Module is the import path every module of the repository lives under.
const Module = "github.com/pcourt/pcourt"

// PureDomains are the packages that hold a service's decisions. They may
// import the standard library and pure libs, never the adapters' libraries,
// directly or through another package of the repository.
var PureDomains = []string{
	"libs/jcs",
	"services/readiness/internal/readiness",
	"services/filings/internal/draft",
	"services/cases/internal/procedure",
	"services/webhooks/internal/delivery",
	"services/compat-edge/internal/inventory",
	"services/compat-edge/internal/policy",
}

// AdapterLibraries are the import path prefixes a pure domain never reaches.
var AdapterLibraries = []string{
	"github.com/gin-gonic/",
	"github.com/redis/",
	"github.com/segmentio/kafka-go",
	"github.com/twmb/franz-go",
	"net/http",
}

// Violation is one import that breaks a rule.
type Violation struct {
	Package string // repository-relative directory of the importing package
	Import  string
	Rule    string
	Via     []string // for transitive violations, the chain that reaches Import
}

func (v Violation) String() string {
	s := fmt.Sprintf("%s imports %s: %s", v.Package, v.Import, v.Rule)
	if len(v.Via) > 0 {
		s += " (through " + strings.Join(v.Via, " → ") + ")"
	}
	return s
}

// Check parses the imports of every non-test Go file under root and reports
// every violation of the rules, sorted. Test files are exempt: a service's
// tests may start the stack they test.
func Check(root string) ([]Violation, error) {
	imports, err := parseImports(root)
	if err != nil {
		return nil, err
	}
	var out []Violation
	for pkg, imps := range imports {
		for _, imp := range imps {
			if v, ok := directRule(pkg, imp); ok {
				out = append(out, v)
			}
		}
	}
	for _, pure := range PureDomains {
		if _, ok := imports[pure]; !ok {
			continue // not built yet; the rule applies from its first file on
		}
		out = append(out, reachAdapters(imports, pure)...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// directRule checks the module boundaries: a service never imports another
// service, and libs and tools import no service.
func directRule(pkg, imp string) (Violation, bool) {
	rel, ok := strings.CutPrefix(imp, Module+"/")
	if !ok || !strings.HasPrefix(rel, "services/") {
		return Violation{}, false
	}
	target := strings.SplitN(rel, "/", 3)[1]
	switch {
	case strings.HasPrefix(pkg, "libs/") || pkg == "libs":
		return Violation{Package: pkg, Import: imp, Rule: "libs import no service"}, true
	case strings.HasPrefix(pkg, "tools/"):
		return Violation{Package: pkg, Import: imp, Rule: "tools reach services over HTTP and Kafka, never by import"}, true
	case strings.HasPrefix(pkg, "services/"):
		if own := strings.SplitN(pkg, "/", 3)[1]; own != target {
			return Violation{Package: pkg, Import: imp, Rule: "services never import each other"}, true
		}
	}
	return Violation{}, false
}

// reachAdapters walks the repository packages pure imports, breadth first,
// and reports every adapter library it reaches with the shortest chain.
func reachAdapters(imports map[string][]string, pure string) []Violation {
	var out []Violation
	seen := map[string]bool{pure: true}
	type step struct {
		pkg string
		via []string
	}
	queue := []step{{pkg: pure}}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, imp := range imports[cur.pkg] {
			for _, lib := range AdapterLibraries {
				if imp == lib || strings.HasPrefix(imp, lib) {
					out = append(out, Violation{Package: pure, Import: imp, Rule: "a pure domain imports no Gin, Redis, Kafka or HTTP", Via: append(append([]string(nil), cur.via...), cur.pkg)[1:]})
				}
			}
			rel, ok := strings.CutPrefix(imp, Module+"/")
			if !ok || seen[rel] {
				continue
			}
			seen[rel] = true
			queue = append(queue, step{pkg: rel, via: append(append([]string(nil), cur.via...), cur.pkg)})
		}
	}
	return out
}

// parseImports maps each package directory (relative to root, slash
// separated) to the imports of its non-test files.
func parseImports(root string) (map[string][]string, error) {
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			out[rel] = append(out[rel], imp)
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading imports under %s: %w", root, err)
	}
	return out, nil
}
