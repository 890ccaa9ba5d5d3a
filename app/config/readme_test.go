package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// Every OMEGA_* variable must be documented in the README's table, so the
// README cannot drift from the code.
func TestReadmeDocumentsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if name := f.Tag.Get("env"); name != "" {
				name = "OMEGA_" + strings.Split(name, ",")[0]
				if !strings.Contains(string(readme), "`"+name+"`") {
					t.Errorf("README.md does not document %s", name)
				}
				continue
			}
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeOf(Config{}))
}
