package sender

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/omega-gateway/omega/domain/markers"
)

// ErrFactSecret refuses a fact that holds, or names, a credential: a fact
// is stored, shown on the sender's page and sent in every prompt, so a
// secret in one would travel everywhere.
var ErrFactSecret = fmt.Errorf("%w: looks like a secret", ErrFactValue)

// SecretMask replaces a secret-shaped value in what omega records.
const SecretMask = "[REDACTED]"

// secretShapes are the forms credentials are issued in: provider API keys,
// platform tokens, cloud keys, JSON web tokens and PEM private keys.
var secretShapes = []*regexp.Regexp{
	regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`),                                   // OpenAI, Anthropic (sk-ant-...)
	regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`),                // GitHub
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`),                            // GitHub fine-grained
	regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`),                           // Slack
	regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),                             // AWS access key id
	regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{30,}`),                                  // Google API key
	regexp.MustCompile(`\b[0-9]{6,12}:[A-Za-z0-9_-]{30,}`),                          // Telegram bot token
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`), // JWT
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
}

// opaqueRun is a word long enough to be a generated token ('/' and '.'
// end it, so a URL's path is read segment by segment).
var opaqueRun = regexp.MustCompile(`[A-Za-z0-9_+=-]{32,}`)

// secretKeyWords name credentials: a fact under a key holding one of these
// ('_'-separated) is a secret whatever its value looks like.
var secretKeyWords = []string{"password", "passwd", "passphrase", "apikey", "token", "credential", "credentials",
	"api_key", "access_key", "secret_key", "private_key", "client_secret", "pin_code"}

// namesCredential reports whether a normalized key holds a credential word.
func namesCredential(key string) bool {
	padded := "_" + key + "_"
	for _, w := range secretKeyWords {
		if strings.Contains(padded, "_"+w+"_") {
			return true
		}
	}
	return false
}

// LooksSecret reports whether s holds something shaped like a credential.
func LooksSecret(s string) bool {
	for _, re := range secretShapes {
		if re.MatchString(s) {
			return true
		}
	}
	for _, run := range opaqueRun.FindAllString(s, -1) {
		if looksRandom(run) {
			return true
		}
	}
	return false
}

// looksRandom tells a generated token from a long ordinary word: it mixes
// upper case, lower case and digits, or is hexadecimal with digits and
// letters.
func looksRandom(run string) bool {
	var upper, lower, digit, nonHex bool
	for _, r := range run {
		upper = upper || unicode.IsUpper(r)
		lower = lower || unicode.IsLower(r)
		digit = digit || unicode.IsDigit(r)
		nonHex = nonHex || !strings.ContainsRune("0123456789abcdefABCDEF", r)
	}
	return digit && (upper && lower || !nonHex && (upper || lower))
}

// MaskSecrets replaces every secret-shaped part of s with SecretMask, for
// text that is recorded as a refusal's evidence.
func MaskSecrets(s string) string {
	for _, re := range secretShapes {
		s = re.ReplaceAllString(s, SecretMask)
	}
	return opaqueRun.ReplaceAllStringFunc(s, func(run string) string {
		if looksRandom(run) {
			return SecretMask
		}
		return run
	})
}

// checkFactKey refuses keys that are not a plain name (letters, digits and
// '_' once normalized), that name a credential, or that are a marker's
// name: a key is written into every prompt beside the marker protocol.
func checkFactKey(key string) error {
	for _, r := range key {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			return fmt.Errorf("%w: %q may hold only letters, digits and '_'", ErrFactKey, key)
		}
	}
	if _, ok := markers.Lookup(strings.ToUpper(key)); ok {
		return fmt.Errorf("%w: %q is a marker name", ErrFactKey, key)
	}
	if namesCredential(key) {
		return fmt.Errorf("%w: the key %q names a credential", ErrFactSecret, key)
	}
	return nil
}

// checkFactValue refuses secret-shaped values and values that carry a
// marker ("SCHEDULE: ..."), which would reach every prompt as protocol.
func checkFactValue(value string) error {
	if LooksSecret(value) {
		return ErrFactSecret
	}
	for _, name := range markers.Names() {
		if strings.Contains(value, name+":") {
			return fmt.Errorf("%w: holds the marker %s", ErrFactValue, name)
		}
	}
	return nil
}
