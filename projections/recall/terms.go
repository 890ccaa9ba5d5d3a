package recall

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTerms bounds the words one search looks for.
const maxTerms = 16

// minTermRunes is the shortest word searched for: shorter ones ("a",
// "is", "de") are in nearly every passage.
const minTermRunes = 3

// stop are common words, in the languages omega speaks, that say
// nothing about what a conversation was about, and the words people use
// to ask for a recall ("remember", "earlier").
var stop = setOf(
	// English
	"the", "and", "for", "you", "your", "are", "was", "were", "that", "this", "what", "when", "where", "which",
	"with", "about", "have", "has", "had", "did", "does", "there", "they", "them", "then", "from", "would",
	"could", "should", "remember", "time", "last", "earlier", "talked", "discussed", "told", "tell",
	"mentioned", "said", "say", "yesterday", "week", "please", "can", "how", "who", "why", "our", "not",
	"but", "all", "any", "one", "out", "into", "some", "again", "know", "recall", "recommend", "recommended",
	"remind", "agreed", "decided", "did", "talk", "back", "ago", "just", "like", "get", "got", "me", "my",
	// Spanish, Portuguese
	"que", "los", "las", "una", "uno", "por", "con", "para", "como", "este", "esta", "sobre", "cuando",
	"donde", "recuerdas", "dijiste", "ayer", "hablamos", "semana", "del", "pero", "más", "você", "disse",
	"lembra", "ontem", "não", "com", "uma", "sim",
	// French, Italian, German, Dutch
	"les", "des", "est", "pour", "dans", "avec", "souviens", "hier", "che", "non", "per", "ricordi",
	"ieri", "der", "die", "das", "und", "ist", "nicht", "mit", "erinnerst", "gestern", "een", "het",
	"van", "weet", "gisteren",
)

func setOf(ws ...string) map[string]bool {
	out := make(map[string]bool, len(ws))
	for _, w := range ws {
		out[w] = true
	}
	return out
}

// Terms are the words of text a search looks for: distinct, lower-cased,
// at least minTermRunes letters or digits, common words left out, each as
// the prefix that also finds its inflections ("trips" finds "trip" and
// "trips"; a plural's final s is dropped).
func Terms(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		n := utf8.RuneCountInString(w)
		if n < minTermRunes || stop[w] {
			continue
		}
		if n > minTermRunes && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = strings.TrimSuffix(w, "s")
		}
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxTerms {
			break
		}
	}
	return out
}

// ftsMatch is an FTS5 query for any of the terms as prefixes, in chat's
// passages when chat is given. Terms hold only letters and digits, so
// quoting them is enough.
func ftsMatch(terms []string, chat string) string {
	alts := make([]string, len(terms))
	for i, t := range terms {
		alts[i] = `"` + t + `"*`
	}
	q := "body : (" + strings.Join(alts, " OR ") + ")"
	if chat != "" {
		q = `owner : "` + ownerToken(chat) + `" AND ` + q
	}
	return q
}

// tsQuery is the PostgreSQL tsquery for any of the terms as prefixes.
func tsQuery(terms []string) string {
	alts := make([]string, len(terms))
	for i, t := range terms {
		alts[i] = "'" + t + "':*"
	}
	return strings.Join(alts, " | ")
}
