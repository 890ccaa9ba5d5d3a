package providertest

import "testing"

// PlantedSecrets are what PlantSecrets sets, by variable name.
func PlantedSecrets() map[string]string {
	return map[string]string{
		"OMEGA_API_TOKEN":         "planted-api-token-1111",
		"OMEGA_TELEGRAM_TOKEN":    "123456:planted-telegram-token-2222",
		"OMEGA_ANTHROPIC_API_KEY": "planted-anthropic-key-3333",
		"OMEGA_OPENAI_API_KEY":    "planted-openai-key-4444",
		"OMEGA_DATABASE_URL":      "postgres://omega:planted-db-pass-5555@db/omega",
		"SECRET_X":                "planted-random-secret-6666",
	}
}

// PlantSecrets sets PlantedSecrets in the test's environment the way an
// operator's configuration would, for tests that check none reaches a
// provider, with a locale and a Claude Code config dir that must.
func PlantSecrets(t testing.TB) map[string]string {
	t.Helper()
	secrets := PlantedSecrets()
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("CLAUDE_CONFIG_DIR", "/tmp/claude-config")
	return secrets
}
