package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// Module is the import path every module of the repository lives under.
const Module = "github.com/pcourt/pcourt"

// PureDomains are the packages that hold a service's decisions. They may
// import the standard library and pure libs, never the adapters' libraries,
// directly or through another package of the repository. libs/award and
// libs/jwk are here because partners import them to verify awards offline:
// verification must not bring in a web framework, a client or net/http.
var PureDomains = []string{
	"libs/award",
	"libs/jcs",
	"libs/jwk",
	"libs/refusal",
	"services/readiness/internal/readiness",
	"services/filings/internal/draft",
	"services/cases/internal/procedure",
	"services/cases/internal/tribunal",
	"services/cases/internal/evidence",
	"services/cases/internal/afteraward",
	"services/cases/internal/archive",
	"services/cases/internal/settlement",
	"services/webhooks/internal/delivery",
	"services/compat-edge/internal/inventory",
	"services/compat-edge/internal/policy",
	"services/accounts/internal/account",
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

// Pending are the module-boundary violations known and scheduled to go,
// each with the work that removes it. Check reports an entry that no
// longer occurs, so the entry goes with its violation. None today: the
// last (the console's test importing webhookstest, and compat-edge's
// go.mod requiring services/webhooks) went with issue 22, item 1.
var Pending = []Violation{}

// Check parses the imports of every Go file under root, and the requires
// of every services/*/go.mod, and reports every violation of the rules,
// sorted. The module boundaries hold for test files too: a service's tests
// reach another service as a process, over HTTP and Kafka, so that no
// service module requires another and `go list -deps` of each names no
// other service. The pure-domain rule reads non-test files only (a
// domain's tests may use an adapter).
func Check(root string) ([]Violation, error) {
	imports, testImports, err := parseImports(root)
	if err != nil {
		return nil, err
	}
	found, err := serviceRequires(root)
	if err != nil {
		return nil, err
	}
	skewed, err := moduleVersions(root)
	if err != nil {
		return nil, err
	}
	found = append(found, skewed...)
	for pkg, imps := range imports {
		for _, imp := range imps {
			if v, ok := directRule(pkg, imp); ok {
				found = append(found, v)
			}
		}
	}
	for pkg, imps := range testImports {
		for _, imp := range imps {
			if v, ok := directRule(pkg, imp); ok {
				v.Rule += ", tests included"
				found = append(found, v)
			}
		}
	}
	var out []Violation
	seen := map[string]bool{}
	for _, v := range found {
		if seen[v.String()] {
			continue
		}
		seen[v.String()] = true
		if !slices.ContainsFunc(Pending, func(p Violation) bool { return p.String() == v.String() }) {
			out = append(out, v)
		}
	}
	for _, p := range Pending {
		// An entry applies where its package (or go.mod) is under root.
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p.Package))); err == nil && !seen[p.String()] {
			out = append(out, Violation{Package: p.Package, Import: p.Import, Rule: "listed in importrules.Pending but no longer found: remove the entry"})
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

// serviceRequires reports every services/<name>/go.mod that requires
// another service's module: its packages, tests included, could then import
// that service.
func serviceRequires(root string) ([]Violation, error) {
	mods, err := filepath.Glob(filepath.Join(root, "services", "*", "go.mod"))
	if err != nil {
		return nil, err
	}
	var out []Violation
	for _, path := range mods {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f, err := modfile.ParseLax(path, b, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		own := filepath.Base(filepath.Dir(path))
		for _, r := range f.Require {
			if other, ok := strings.CutPrefix(r.Mod.Path, Module+"/services/"); ok && other != own {
				out = append(out, Violation{Package: "services/" + own + "/go.mod", Import: r.Mod.Path, Rule: "a service module requires no other service module"})
			}
		}
	}
	return out, nil
}

// moduleVersions reports every go.mod of the repository (api, libs, tools,
// services/*, and tools/kubeassets, which helm and kube-apiserver are built
// of) that requires a module at a lower version than another of them does.
// Each module builds on its own (GOWORK=off), so a dependency at two
// versions is compiled twice, with everything above it: one module a minor
// version behind on golang.org/x/sys recompiled most of what the others
// had compiled (docs/development.md, "CI time").
func moduleVersions(root string) ([]Violation, error) {
	var mods []string
	for _, pattern := range []string{"*/go.mod", "services/*/go.mod", "tools/*/go.mod"} {
		found, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil {
			return nil, err
		}
		mods = append(mods, found...)
	}
	type requirement struct{ dir, version string }
	byPath := map[string][]requirement{}
	for _, path := range mods {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f, err := modfile.ParseLax(path, b, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return nil, err
		}
		for _, r := range f.Require {
			if !strings.HasPrefix(r.Mod.Path, Module+"/") {
				byPath[r.Mod.Path] = append(byPath[r.Mod.Path], requirement{filepath.ToSlash(dir), r.Mod.Version})
			}
		}
	}
	var out []Violation
	for path, reqs := range byPath {
		sort.Slice(reqs, func(i, j int) bool { return reqs[i].dir < reqs[j].dir })
		highest := reqs[0]
		for _, r := range reqs[1:] {
			if semver.Compare(r.version, highest.version) > 0 {
				highest = r
			}
		}
		for _, r := range reqs {
			if r.version != highest.version {
				out = append(out, Violation{Package: r.dir + "/go.mod", Import: path + "@" + r.version,
					Rule: "every module requires a dependency at one version: " + highest.dir + "/go.mod requires " + highest.version})
			}
		}
	}
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
// separated) to the imports of its non-test files, and to those of its test
// files.
func parseImports(root string) (map[string][]string, map[string][]string, error) {
	out, tests := map[string][]string{}, map[string][]string{}
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
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		into := out
		if strings.HasSuffix(name, "_test.go") {
			into = tests
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
			into[rel] = append(into[rel], imp)
		}
		if _, ok := into[rel]; !ok {
			into[rel] = nil
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading imports under %s: %w", root, err)
	}
	return out, tests, nil
}
