// Package i18n holds the languages omega speaks, a stop-word language
// detector and the catalogue of user-facing texts the gateway sends on its
// own (status nudges, errors, command answers). It is pure: no I/O.
package i18n

import (
	"strings"
	"unicode"
)

// The supported languages, named the way they are stored in sender facts and
// shown to the model ("IMPORTANT: Always respond in Spanish.").
const (
	English    = "English"
	Spanish    = "Spanish"
	Portuguese = "Portuguese"
	French     = "French"
	German     = "German"
	Italian    = "Italian"
	Dutch      = "Dutch"
	Russian    = "Russian"
)

// Default is the language used when nothing better is known.
const Default = English

// Languages returns the supported languages, English first.
func Languages() []string {
	return []string{English, Spanish, Portuguese, French, German, Italian, Dutch, Russian}
}

// aliases maps lower-cased codes and names (English and native) to the
// canonical language name.
var aliases = map[string]string{
	"en": English, "eng": English, "english": English, "inglés": English, "ingles": English,
	"es": Spanish, "spa": Spanish, "spanish": Spanish, "español": Spanish, "espanol": Spanish, "castellano": Spanish,
	"pt": Portuguese, "pt-br": Portuguese, "pt-pt": Portuguese, "por": Portuguese, "portuguese": Portuguese, "português": Portuguese, "portugues": Portuguese,
	"fr": French, "fra": French, "fre": French, "french": French, "français": French, "francais": French,
	"de": German, "deu": German, "ger": German, "german": German, "deutsch": German,
	"it": Italian, "ita": Italian, "italian": Italian, "italiano": Italian,
	"nl": Dutch, "nld": Dutch, "dut": Dutch, "dutch": Dutch, "nederlands": Dutch, "vlaams": Dutch,
	"ru": Russian, "rus": Russian, "russian": Russian, "русский": Russian, "русский язык": Russian,
}

// Normalize maps a language code or name ("es", "español", "Spanish",
// "en-US") to its canonical name. The bool is false for unsupported input.
func Normalize(name string) (string, bool) {
	key := strings.ToLower(strings.TrimSpace(name))
	if lang, ok := aliases[key]; ok {
		return lang, true
	}
	// Region-qualified codes such as "en-US", "pt_BR", "de-AT".
	if i := strings.IndexAny(key, "-_"); i > 0 {
		if lang, ok := aliases[key[:i]]; ok {
			return lang, true
		}
	}
	return "", false
}

// OrDefault returns the canonical name of lang, or Default when lang is
// empty or unsupported. Handy when reading a stored preference.
func OrDefault(lang string) string {
	if l, ok := Normalize(lang); ok {
		return l
	}
	return Default
}

// stopWords are frequent function words that rarely appear in the other
// supported languages. English has none: it is the fallback. Words shared
// between languages (e.g. "de", "que", "la") count for each of them, and the
// highest score wins.
var stopWords = map[string][]string{
	Spanish: {
		"el", "los", "las", "una", "que", "es", "y", "por", "para", "con", "del",
		"hola", "gracias", "qué", "cómo", "está", "estás", "pero", "muy", "mi", "yo",
		"puedes", "quiero", "necesito", "buenos", "días", "tengo", "hoy", "también", "sí", "favor", "como",
	},
	Portuguese: {
		"o", "os", "as", "uma", "que", "é", "e", "não", "para", "com", "do", "da",
		"olá", "obrigado", "obrigada", "você", "está", "muito", "meu", "minha", "eu",
		"pode", "quero", "preciso", "bom", "dia", "tenho", "hoje", "também", "sim", "tudo", "bem", "como",
	},
	French: {
		"le", "les", "un", "une", "est", "et", "je", "tu", "vous", "pour", "avec", "des", "du",
		"bonjour", "merci", "ça", "comment", "suis", "pas", "ne", "très", "mon", "ma",
		"peux", "veux", "besoin", "oui", "aujourd'hui", "c'est", "salut", "qui", "quoi",
	},
	German: {
		"der", "die", "das", "und", "ist", "ich", "du", "nicht", "mit", "für", "ein", "eine",
		"hallo", "danke", "wie", "geht", "es", "mir", "sehr", "mein", "meine", "bitte",
		"kannst", "möchte", "brauche", "guten", "tag", "heute", "auch", "ja", "was", "wer",
	},
	Italian: {
		"il", "lo", "gli", "una", "che", "è", "e", "non", "per", "con", "del", "della",
		"ciao", "grazie", "come", "stai", "sono", "molto", "mio", "mia", "io",
		"puoi", "voglio", "ho", "bisogno", "buongiorno", "oggi", "anche", "sì", "cosa", "chi",
	},
	Dutch: {
		"de", "het", "een", "en", "is", "ik", "je", "niet", "met", "voor", "van",
		"hallo", "dank", "bedankt", "hoe", "gaat", "het", "mij", "erg", "mijn", "alsjeblieft",
		"kun", "kan", "wil", "heb", "nodig", "goedemorgen", "vandaag", "ook", "ja", "wat", "wie",
	},
}

// stopSets is stopWords indexed for lookup; built once, never mutated.
var stopSets = func() map[string]map[string]bool {
	sets := make(map[string]map[string]bool, len(stopWords))
	for lang, words := range stopWords {
		set := make(map[string]bool, len(words))
		for _, w := range words {
			set[w] = true
		}
		sets[lang] = set
	}
	return sets
}()

// detectOrder fixes the tie-break: earlier wins on equal scores, so the
// result never depends on map iteration order.
var detectOrder = []string{Spanish, Portuguese, French, German, Italian, Dutch}

// Detect guesses the language of a message. Cyrillic letters mean Russian;
// otherwise each language scores one point per stop word found, and the best
// score wins if it reaches two (one for very short messages). Anything else
// is English, the safe default for a greeting like "hi".
func Detect(text string) string {
	if isMostlyCyrillic(text) {
		return Russian
	}
	words := tokenize(text)
	if len(words) == 0 {
		return Default
	}
	best, bestScore := Default, 0
	for _, lang := range detectOrder {
		score := 0
		for _, w := range words {
			if stopSets[lang][w] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = lang, score
		}
	}
	threshold := 2
	if len(words) <= 2 {
		threshold = 1
	}
	if bestScore < threshold || englishScore(words) >= bestScore {
		return Default
	}
	return best
}

// englishWords lets plainly English text win over incidental overlaps such
// as "a", "me", "is" or "die".
var englishWords = map[string]bool{
	"the": true, "and": true, "is": true, "are": true, "you": true, "i": true, "to": true, "of": true,
	"it": true, "what": true, "how": true, "please": true, "can": true, "my": true, "me": true,
	"this": true, "that": true, "with": true, "for": true, "hello": true, "hi": true, "thanks": true,
	"remind": true, "tomorrow": true, "today": true, "do": true, "have": true, "need": true, "want": true,
}

func englishScore(words []string) int {
	n := 0
	for _, w := range words {
		if englishWords[w] {
			n++
		}
	}
	return n
}

func tokenize(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	})
}

func isMostlyCyrillic(text string) bool {
	var cyr, latin int
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		case unicode.Is(unicode.Latin, r):
			latin++
		}
	}
	return cyr > 0 && cyr >= latin
}
