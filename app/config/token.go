package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// APITokenFile holds the API token omega generated for itself, in the data
// directory.
const APITokenFile = "api_token"

// EnsureAPIToken gives an API that listens beyond loopback a token when
// none is configured, so that a fresh `docker compose up` starts instead
// of refusing forever. The first start generates one, keeps it in the data
// directory (0600) and prints it once to out; later starts read it back
// silently. It never goes to the log. A configured OMEGA_API_TOKEN, or a
// loopback address, leaves everything as it is.
func EnsureAPIToken(cfg *Config, out io.Writer) error {
	if cfg.APIToken != "" || !cfg.HTTPNeedsToken() {
		return nil
	}
	path := filepath.Join(cfg.DataDir, APITokenFile)
	b, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(b)) != "" {
		cfg.APIToken = strings.TrimSpace(string(b))
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read the API token %s: %w", path, err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data directory %s: %w", cfg.DataDir, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return fmt.Errorf("generate an API token: %w", err)
	}
	token := hex.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("keep the API token in %s: %w", path, err)
	}
	cfg.APIToken = token
	fmt.Fprintf(out, "omega: the HTTP API listens on %s and no OMEGA_API_TOKEN is set, so one was generated and kept in %s:\n\n    %s\n\nSend it as \"Authorization: Bearer <token>\". It is shown only this once.\n",
		cfg.HTTPAddr, path, token)
	return nil
}
