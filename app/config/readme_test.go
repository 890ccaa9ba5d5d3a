package config

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/registry"
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
			if name := f.Tag.Get("env"); name != "" && name != "-" {
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
	// The channels' settings are declared by their packages.
	for _, d := range registry.All() {
		if d.Settings != nil {
			walk(reflect.TypeOf(d.Settings()).Elem())
		}
	}
}
