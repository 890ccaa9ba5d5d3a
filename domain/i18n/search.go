package i18n

import "fmt"

// SearchKey names a text of the /search answer.
type SearchKey int

// The /search answer's texts.
const (
	SearchUsage SearchKey = iota // how to use it
	SearchNone                   // %s the words searched for
	SearchFound                  // heading of the passages found
)

var searchTexts = map[string][3]string{
	English:    {"Usage: /search WORDS — find what was said in our earlier conversations.", "Nothing in our earlier conversations matches “%s”.", "From our earlier conversations:"},
	Spanish:    {"Uso: /search PALABRAS — busca lo que se dijo en nuestras conversaciones anteriores.", "Nada en nuestras conversaciones anteriores coincide con «%s».", "De nuestras conversaciones anteriores:"},
	Portuguese: {"Uso: /search PALAVRAS — procura o que foi dito nas nossas conversas anteriores.", "Nada nas nossas conversas anteriores corresponde a “%s”.", "Das nossas conversas anteriores:"},
	French:     {"Usage : /search MOTS — cherche ce qui a été dit dans nos conversations précédentes.", "Rien dans nos conversations précédentes ne correspond à « %s ».", "De nos conversations précédentes :"},
	German:     {"Verwendung: /search WÖRTER — sucht, was in unseren früheren Gesprächen gesagt wurde.", "Nichts in unseren früheren Gesprächen passt zu „%s“.", "Aus unseren früheren Gesprächen:"},
	Italian:    {"Uso: /search PAROLE — cerca ciò che è stato detto nelle nostre conversazioni precedenti.", "Niente nelle nostre conversazioni precedenti corrisponde a «%s».", "Dalle nostre conversazioni precedenti:"},
	Dutch:      {"Gebruik: /search WOORDEN — zoekt wat er in onze eerdere gesprekken is gezegd.", "Niets in onze eerdere gesprekken komt overeen met ‘%s’.", "Uit onze eerdere gesprekken:"},
	Russian:    {"Использование: /search СЛОВА — ищет сказанное в наших прошлых разговорах.", "В наших прошлых разговорах ничего не найдено по запросу «%s».", "Из наших прошлых разговоров:"},
}

// Search returns a text of the /search answer in lang (English when lang
// lacks it), formatted with args.
func Search(lang string, k SearchKey, args ...any) string {
	t, ok := searchTexts[OrDefault(lang)]
	if !ok {
		t = searchTexts[English]
	}
	if len(args) == 0 {
		return t[k]
	}
	return fmt.Sprintf(t[k], args...)
}
