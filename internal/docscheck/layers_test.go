package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/m3bench/m3eval/"

// goList runs go list in the module's root with args and returns its output's lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// TestArchitectureImportRules holds the code to what docs/architecture.md says of the
// imports (non-test code): the screens reach storage only through internal/session's
// interfaces, so tui does not depend on the store; the domain packages depend on neither
// the store nor the screens; only the store imports database/sql; and the rule judge does
// not pull in the IllusionBench scorer for the Wilson interval, which is agree's; cmdutil
// depends on no m3eval package.
func TestArchitectureImportRules(t *testing.T) {
	forbidden := map[string][]string{
		"tui":                 {"internal/store", "database/sql"},
		"internal/session":    {"internal/store", "tui", "database/sql", "github.com/charmbracelet/bubbletea"},
		"internal/judge":      {"internal/illusion", "internal/store", "tui"},
		"internal/answer":     {"internal/store", "tui", "internal/judge", "internal/simulate"},
		"internal/rubric":     {"internal/store", "tui"},
		"internal/dataset":    {"internal/store", "tui"},
		"internal/agree":      {"internal/store", "tui"},
		"internal/campaign":   {"internal/store", "tui"},
		"internal/sample":     {"internal/store", "tui"},
		"internal/ingest":     {"internal/store", "tui"},
		"internal/modeljudge": {"internal/store", "tui"},
		"internal/illusion":   {"internal/store", "tui"},
		"internal/ppi":        {"internal/store", "tui"},
		"internal/workflow":   {"tui"},
		"internal/scoring":    {"tui"},
		"internal/judgerun":   {"tui"},
		"internal/importer":   {"tui"},
		"internal/estimate":   {"tui"},
	}
	for pkg, bad := range forbidden {
		deps := goList(t, "-deps", "./"+pkg)
		if len(deps) == 0 {
			t.Fatalf("go list -deps ./%s listed nothing: the rule would pass vacuously", pkg)
		}
		for _, b := range bad {
			want := b
			if !strings.Contains(b, ".") && !strings.HasPrefix(b, "database/") {
				want = module + b
			}
			if slices.Contains(deps, want) {
				t.Errorf("%s depends on %s (go list -deps ./%s)", pkg, b, pkg)
			}
		}
	}

	// database/sql is imported directly by internal/store and nothing else.
	var sqlUsers []string
	for _, line := range strings.Split(strings.Join(goList(t, "-f", "{{.ImportPath}}:{{join .Imports \",\"}}", "./..."), "\n"), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		if slices.Contains(strings.Split(imports, ","), "database/sql") && !strings.HasPrefix(pkg, module+"internal/store") {
			sqlUsers = append(sqlUsers, pkg)
		}
	}
	if len(sqlUsers) > 0 {
		t.Errorf("packages other than internal/store import database/sql: %v", sqlUsers)
	}

	// The test-only packages (fixtures and the helpers the engines' tests share) are imported
	// by tests alone: go list's Imports leave out the _test.go files.
	testOnly := []string{module + "internal/testkit", module + "internal/store/storetest"}
	for _, line := range goList(t, "-f", "{{.ImportPath}}:{{join .Imports \",\"}}", "./...") {
		pkg, imports, _ := strings.Cut(line, ":")
		for _, imp := range strings.Split(imports, ",") {
			if slices.Contains(testOnly, imp) && !slices.Contains(testOnly, pkg) {
				t.Errorf("%s imports %s, which only tests may import", pkg, imp)
			}
		}
	}

	// internal/cmdutil holds the cobra helpers every command shares: it depends on no other
	// m3eval package, so that any package may declare its flags with it.
	for _, dep := range goList(t, "-deps", "./internal/cmdutil") {
		if strings.HasPrefix(dep, module) && dep != module+"internal/cmdutil" {
			t.Errorf("internal/cmdutil depends on %s (go list -deps ./internal/cmdutil)", dep)
		}
	}
}

// TestEnginesTakeTheirStore: the engines take *store.Store, not an interface of their own
// (docs/architecture.md says why, issue #42). Those moved already declare no Store
// interface; until the others move, an engine that still declares the store methods it
// needs (a Store interface in its store.go) takes that interface or a smaller one, never
// *store.Store, so that each engine holds to one rule, not a mix.
func TestEnginesTakeTheirStore(t *testing.T) {
	for _, pkg := range []string{"estimate", "report", "workflow", "importer"} {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("internal/%s: no Go files (%v)", pkg, err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(name, "_test.go") && strings.Contains(string(b), "type Store interface") {
				t.Errorf("%s declares a Store interface: internal/%s takes *store.Store (docs/architecture.md)", name, pkg)
			}
		}
	}
	for _, pkg := range []string{"scoring", "judgerun"} {
		dir := filepath.Join("..", pkg)
		if _, err := os.Stat(filepath.Join(dir, "store.go")); err != nil {
			t.Errorf("internal/%s declares no store.go: %v", pkg, err)
			continue
		}
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("internal/%s: no Go files (%v)", pkg, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || !fn.Name.IsExported() {
					continue
				}
				for _, p := range fn.Type.Params.List {
					if isStarStoreStore(p.Type) {
						t.Errorf("%s: %s takes *store.Store; take the package's Store interface (or a smaller one)", fset.Position(fn.Pos()), fn.Name.Name)
					}
				}
			}
		}
	}
}

// isStarStoreStore tells whether the type expression is *store.Store.
func isStarStoreStore(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "store" && sel.Sel.Name == "Store"
}
