//go:build ignore

// exported_names counts a package's exported top-level names (types, funcs, vars, consts), non-test files.
// Run: go run scripts/exported_names.go internal/store (V=1 lists the names). Used by
// scripts/structure-counts.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

func show(name string) {
	if os.Getenv("V") != "" {
		fmt.Println(name)
	}
}

func main() {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, os.Args[1], func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		panic(err)
	}
	n, m := 0, 0
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Name.IsExported() {
						if d.Recv == nil {
							show(d.Name.Name)
							n++
						} else {
							m++
						}
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								show(s.Name.Name)
								n++
							}
						case *ast.ValueSpec:
							for _, id := range s.Names {
								if id.IsExported() {
									show(id.Name)
									n++
								}
							}
						}
					}
				}
			}
		}
	}
	fmt.Printf("%d top-level exported names, %d exported methods\n", n, m)
}
