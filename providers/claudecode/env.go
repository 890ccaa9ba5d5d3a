package claudecode

import "strings"

// childEnvNames are the variables a provider process inherits by exact
// name: what a shell and its tools need to work, locale, proxies, and
// Claude Code's own configuration. Everything else is left out, so no
// OMEGA_* secret (API token, bot token, keys, database password) and no
// unrelated credential of the host reaches the model's tools.
var childEnvNames = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"TMPDIR": true, "TERM": true, "LANG": true, "LANGUAGE": true, "TZ": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true,
	"http_proxy": true, "https_proxy": true, "no_proxy": true, "all_proxy": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "NODE_EXTRA_CA_CERTS": true,
	"CLAUDE_CONFIG_DIR": true,
}

// childEnvPrefixes are allowed by prefix: locale categories, XDG base
// directories (where Claude Code keeps its state) and Claude Code's own
// authentication and settings (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
// CLAUDE_CODE_USE_BEDROCK, ...), which belong to the CLI, not to omega.
var childEnvPrefixes = []string{"LC_", "XDG_", "ANTHROPIC_", "CLAUDE_CODE_"}

// ChildEnv returns the environment for a provider process: the allowed
// variables of environ, in order. OMEGA_* is never passed, and neither is
// CLAUDECODE (set inside a Claude Code session, it makes the CLI refuse
// to start a nested one).
func ChildEnv(environ []string) []string {
	out := make([]string, 0, len(childEnvNames))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && allowedInChild(name) {
			out = append(out, kv)
		}
	}
	return out
}

func allowedInChild(name string) bool {
	if strings.HasPrefix(name, "OMEGA_") {
		return false
	}
	if childEnvNames[name] {
		return true
	}
	for _, p := range childEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
