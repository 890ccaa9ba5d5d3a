package markers

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestEverySpecParsesItsExample proves each spec's parser produces the
// spec's own marker.
func TestEverySpecParsesItsExample(t *testing.T) {
	orders := map[int]string{}
	for _, s := range Specs() {
		res := Parse("ok " + s.Example)
		if s.kind == wholeLine {
			res = Parse(s.Example)
		}
		if len(res.Markers) != 1 || len(res.Invalid) != 0 {
			t.Errorf("%s: example %q gives %v, invalid %v", s.Name, s.Example, res.Markers, res.Invalid)
			continue
		}
		if got := res.Markers[0].Name(); got != s.Name {
			t.Errorf("%s: example parses as %s", s.Name, got)
		}
		if s.Order > 0 {
			if other, dup := orders[s.Order]; dup {
				t.Errorf("%s and %s share order %d", s.Name, other, s.Order)
			}
			orders[s.Order] = s.Name
		}
	}
}

// TestEveryMarkerTypeHasASpec reads the package source: every type with a
// Name() method is a marker, and some spec must produce it, so a marker
// type added without a spec fails here.
func TestEveryMarkerTypeHasASpec(t *testing.T) {
	produced := map[string]bool{}
	for _, s := range Specs() {
		for _, m := range Parse("ok " + s.Example + "\n" + s.Example).Markers {
			produced[reflect.TypeOf(m).Name()] = true
		}
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var types int
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Name" || fn.Type.Params.NumFields() != 0 {
				continue
			}
			recv, ok := fn.Recv.List[0].Type.(*ast.Ident)
			if !ok {
				continue
			}
			types++
			if !produced[recv.Name] {
				t.Errorf("marker type %s has no spec", recv.Name)
			}
		}
	}
	if types < len(Specs())-1 { // SCHEDULE and SCHEDULE_ACTION share a type
		t.Fatalf("found only %d marker types in the source", types)
	}
}
