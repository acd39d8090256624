package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/store"
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
		// What every command's Run gets sits below the engines and has no SQL, so the
		// domain layer's engines (simulate, illusion, the converters) can take it too; the
		// opening of the database from it is cmdstore's, beside the store.
		"internal/cmdio":    {"tui", "internal/store", "database/sql", "internal/scoring", "internal/judgerun", "internal/estimate", "internal/report", "internal/workflow", "internal/importer"},
		"internal/cmdstore": {"tui", "internal/scoring", "internal/judgerun", "internal/estimate", "internal/report", "internal/workflow", "internal/importer"},
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
// (docs/architecture.md says why, issue #42): none declares an interface named Store, nor
// one whose methods are all methods of *store.Store (a ScoreReader, an EpisodeReader).
func TestEnginesTakeTheirStore(t *testing.T) {
	storeMethods := map[string]bool{}
	st := reflect.TypeFor[*store.Store]()
	for i := range st.NumMethod() {
		storeMethods[st.Method(i).Name] = true
	}
	for _, pkg := range []string{"estimate", "report", "workflow", "importer", "scoring", "judgerun"} {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("internal/%s: no Go files (%v)", pkg, err)
		}
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				if it, ok := ts.Type.(*ast.InterfaceType); ok && (ts.Name.Name == "Store" || storeOnly(it, storeMethods)) {
					t.Errorf("%s: interface %s stands for the store: internal/%s takes *store.Store (docs/architecture.md)", fset.Position(ts.Pos()), ts.Name.Name, pkg)
				}
				return true
			})
		}
	}
}

// storeOnly tells whether every method the interface declares (embedded interfaces aside) is
// a method of *store.Store.
func storeOnly(it *ast.InterfaceType, storeMethods map[string]bool) bool {
	n := 0
	for _, m := range it.Methods.List {
		for _, name := range m.Names {
			if !storeMethods[name.Name] {
				return false
			}
			n++
		}
	}
	return n > 0
}
