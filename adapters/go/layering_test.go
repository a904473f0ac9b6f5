// Package layering checks the adapter's layers from the import clauses of
// every Go file of the module, tests included (README.md, "Layout"):
//
//   - sdk/... imports nothing else of the module;
//   - contract/... imports only sdk and contract (no suite, nor the registry);
//   - a suite, suites/<name>/..., imports only sdk, contract and itself;
//   - the registry, package suites, is imported by cmd/... alone, and
//     imports every suite (each is registered);
//   - cmd/... imports no suite but through the registry;
//   - no package of the module lies outside these, and no imports form a
//     cycle (the compiler refuses one too; this names it).
package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is go.mod's module path.
const module = "ahp-interop/adapters/go"

// pkg is one directory of Go files: its imports of the module's packages
// (relative paths), from its own files (the package and its internal tests)
// and from its external tests (package x_test).
type pkg struct {
	imports, xtestImports map[string][]string // imported package -> the files importing it
}

// scan reads the import clauses of every .go file under the module root.
func scan(t *testing.T, root string) map[string]*pkg {
	t.Helper()
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		k := pkgs[rel]
		if k == nil {
			k = &pkg{imports: map[string][]string{}, xtestImports: map[string][]string{}}
			pkgs[rel] = k
		}
		into := k.imports
		if strings.HasSuffix(f.Name.Name, "_test") && strings.HasSuffix(name, "_test.go") {
			into = k.xtestImports
		}
		file, _ := filepath.Rel(root, p)
		for _, spec := range f.Imports {
			ip, _ := strconv.Unquote(spec.Path.Value)
			if ip == module || strings.HasPrefix(ip, module+"/") {
				target := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
				into[target] = append(into[target], filepath.ToSlash(file))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// Layers of the module.
const (
	layerSDK      = "sdk"
	layerContract = "contract"
	layerSuite    = "suite"
	layerRegistry = "registry"
	layerCmd      = "cmd"
	layerCheck    = "check" // this package
)

// layer is p's layer, and for a suite its name ("" layer: outside every layer).
func layer(p string) (string, string) {
	first, rest, _ := strings.Cut(p, "/")
	switch {
	case p == "":
		return layerCheck, ""
	case first == "sdk":
		return layerSDK, ""
	case first == "contract":
		return layerContract, ""
	case p == "suites":
		return layerRegistry, ""
	case first == "suites":
		name, _, _ := strings.Cut(rest, "/")
		return layerSuite, name
	case first == "cmd":
		return layerCmd, ""
	}
	return "", ""
}

// violation says why from may not import to ("": it may).
func violation(from, to string) string {
	fl, fname := layer(from)
	tl, tname := layer(to)
	switch {
	case tl == "":
		return "imports a package outside every layer"
	case fl == layerSDK && tl != layerSDK:
		return "the SDK imports " + tl
	case fl == layerContract && tl != layerSDK && tl != layerContract:
		return "the contract imports " + tl
	case fl == layerSuite && tl == layerSuite && tname != fname:
		return "suite " + fname + " imports suite " + tname
	case fl == layerSuite && tl != layerSDK && tl != layerContract && tl != layerSuite:
		return "suite " + fname + " imports " + tl
	case tl == layerRegistry && fl != layerCmd && fl != layerRegistry:
		return "only cmd imports the registry"
	case fl == layerCmd && tl == layerSuite:
		return "cmd imports suite " + tname + " (not through the registry)"
	case fl == layerCheck:
		return "the layering check imports the module"
	}
	return ""
}

// cycle is one import cycle among the packages' own imports (nil: none).
func cycle(pkgs map[string]*pkg) []string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[string]int{}
	var stack []string
	var found []string
	var visit func(p string) bool
	visit = func(p string) bool {
		state[p] = onPath
		stack = append(stack, p)
		k := pkgs[p]
		var next []string
		if k != nil {
			for q := range k.imports {
				next = append(next, q)
			}
		}
		sort.Strings(next)
		for _, q := range next {
			switch state[q] {
			case onPath:
				for i, s := range stack {
					if s == q {
						found = append(append([]string{}, stack[i:]...), q)
					}
				}
				return true
			case unvisited:
				if visit(q) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[p] = done
		return false
	}
	var names []string
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		if state[p] == unvisited && visit(p) {
			return found
		}
	}
	return nil
}

func TestLayering(t *testing.T) {
	pkgs := scan(t, ".")
	for _, want := range []string{"sdk", "contract", "contract/steps", "suites", "suites/core", "suites/lifecycle",
		"cmd/ahp-go"} {
		if pkgs[want] == nil {
			t.Fatalf("no package %s: is the test run from the module root?", want)
		}
	}
	var names []string
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	suites := map[string]bool{}
	for _, from := range names {
		if l, name := layer(from); l == "" {
			t.Errorf("%s: a package outside every layer (sdk, contract, suites, cmd)", from)
		} else if l == layerSuite {
			suites[path.Join("suites", name)] = true
		}
		k := pkgs[from]
		for _, imports := range []map[string][]string{k.imports, k.xtestImports} {
			for to, files := range imports {
				if why := violation(from, to); why != "" {
					t.Errorf("%s imports %s: %s", strings.Join(files, ", "), to, why)
				}
			}
		}
	}
	for s := range suites {
		if pkgs[s] == nil {
			t.Errorf("%s: no package (a suite registers itself from its top package)", s)
		} else if _, registered := pkgs["suites"].imports[s]; !registered {
			t.Errorf("%s is not in the registry (suites/registry.go)", s)
		}
	}
	if c := cycle(pkgs); c != nil {
		t.Errorf("an import cycle: %s", strings.Join(c, " -> "))
	}
}

// The rules themselves, on made-up edges.
func TestViolations(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"sdk", "sdk", true},
		{"sdk", "contract", false},
		{"sdk", "suites/core", false},
		{"contract", "sdk", true},
		{"contract/steps", "contract", true},
		{"contract/steps/stepstest", "contract/steps", true},
		{"contract", "suites/core", false},
		{"contract/steps", "suites", false},
		{"suites/lifecycle", "contract/steps", true},
		{"suites/lifecycle", "sdk", true},
		{"suites/compaction", "suites/lifecycle", false},
		{"suites/compaction", "suites", false},
		{"suites/compaction", "cmd/ahp-go", false},
		{"suites", "suites/compaction", true},
		{"cmd/ahp-go", "suites", true},
		{"cmd/ahp-go", "contract", true},
		{"cmd/ahp-go", "suites/core", false},
		{"tools/x", "sdk", true}, // the package itself is reported, not the edge
		{"sdk", "tools/x", false},
	} {
		if got := violation(c.from, c.to) == ""; got != c.ok {
			t.Errorf("%s -> %s: allowed %v, want %v", c.from, c.to, got, c.ok)
		}
	}
	pkgs := map[string]*pkg{
		"a": {imports: map[string][]string{"b": nil}},
		"b": {imports: map[string][]string{"c": nil}},
		"c": {imports: map[string][]string{"a": nil}},
	}
	if c := strings.Join(cycle(pkgs), " -> "); c != "a -> b -> c -> a" {
		t.Errorf("cycle: %q", c)
	}
	delete(pkgs["c"].imports, "a")
	if c := cycle(pkgs); c != nil {
		t.Errorf("no cycle, found %v", c)
	}
}
