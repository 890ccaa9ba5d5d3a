package config_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app/config"
)

// A fresh container: the API listens on 0.0.0.0 and no token is set. The
// first start generates, keeps and prints one; the second reuses it and
// prints nothing.
func TestFirstStartGeneratesAPIToken(t *testing.T) {
	vars := map[string]string{"OMEGA_DATA_DIR": filepath.Join(t.TempDir(), "data"), "OMEGA_HTTP_ADDR": "0.0.0.0:8787"}
	start := func() (config.Config, string) {
		cfg, err := config.LoadFrom(vars)
		if err != nil {
			t.Fatalf("a fresh configuration is refused: %v", err)
		}
		var out bytes.Buffer
		if err := config.EnsureAPIToken(&cfg, &out); err != nil {
			t.Fatal(err)
		}
		return cfg, out.String()
	}

	first, printed := start()
	if len(first.APIToken) != 64 || !strings.Contains(printed, first.APIToken) {
		t.Fatalf("first start: token %q, printed %q", first.APIToken, printed)
	}
	path := filepath.Join(first.DataDir, config.APITokenFile)
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v %v", path, info, err)
	}
	if !strings.Contains(first.Redactor().String("Bearer "+first.APIToken), "[REDACTED]") {
		t.Error("the generated token is not among the secrets the logs mask")
	}

	second, printed := start()
	if second.APIToken != first.APIToken || printed != "" {
		t.Fatalf("second start: token %q (want the first), printed %q", second.APIToken, printed)
	}

	vars["OMEGA_HTTP_ADDR"] = "127.0.0.1:8787"
	vars["OMEGA_DATA_DIR"] = t.TempDir()
	if local, printed := start(); local.APIToken != "" || printed != "" {
		t.Fatalf("loopback start made a token: %q %q", local.APIToken, printed)
	}
	vars["OMEGA_HTTP_ADDR"], vars["OMEGA_API_TOKEN"] = "0.0.0.0:8787", "configured-token"
	if set, printed := start(); set.APIToken != "configured-token" || printed != "" {
		t.Fatalf("a configured token was replaced: %q %q", set.APIToken, printed)
	}
	if _, err := os.Stat(filepath.Join(vars["OMEGA_DATA_DIR"], config.APITokenFile)); err == nil {
		t.Fatal("a token file was written although none was needed")
	}
}
