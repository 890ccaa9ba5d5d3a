package recall

import (
	"crypto/sha256"
	"encoding/hex"
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
	// Russian
	"что", "это", "как", "для", "был", "была", "было", "мне", "меня", "тебя", "про", "помнишь", "вчера",
	"говорили", "сказал", "сказала", "когда", "где", "который", "которая",
)

func setOf(ws ...string) map[string]bool {
	out := make(map[string]bool, len(ws))
	for _, w := range ws {
		out[w] = true
	}
	return out
}

// stemRunes is how much of a word the index keeps: its first five
// letters, after a plural's final s. Truncation is a stemmer for every
// language at once ("adopting" and "adopt", "greyhounds" and
// "greyhound", "vacaciones" and "vacación" meet), and an exact term
// reads one entry of the index where a prefix query would merge many.
const stemRunes = 5

// stem is the form a word is indexed and searched under.
func stem(w string) string {
	r := []rune(w)
	if n := len(r); n > minTermRunes && r[n-1] == 's' && r[n-2] != 's' {
		r = r[:n-1]
	}
	return string(r[:min(len(r), stemRunes)])
}

// indexed are the stems of text's searchable words, in order, repeats
// kept (they weigh in the ranking).
func indexed(text string) []string {
	var out []string
	for _, w := range words(text) {
		if utf8.RuneCountInString(w) >= minTermRunes && !stop[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// Terms are what a search of text looks for: the distinct stems of its
// words of at least minTermRunes letters or digits, common words left
// out.
func Terms(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range indexed(text) {
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) == maxTerms {
			break
		}
	}
	return out
}

// words are text's lower-cased runs of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// ownerPrefix is the chat as a fixed-length prefix of its terms in the
// owned index (see ownedText).
func ownerPrefix(chat string) string {
	h := sha256.Sum256([]byte(chat))
	return "o" + hex.EncodeToString(h[:6])
}

// stemText is what the index holds of a passage for a search of
// everyone's: its stems.
func stemText(body string) string { return strings.Join(indexed(body), " ") }

// ownedText is what the index holds of a chat's passage for a search of
// that chat: each stem prefixed with the chat's owner prefix. A chat's
// search then reads only its own entries of the index, however many
// passages other people have, and ranks by how rare a word is in its own
// conversations.
func ownedText(chat, body string) string {
	return strings.Join(ownedTerms(indexed(body), chat), " ")
}

// ownedTerms are the terms as the owned index spells them for chat
// (none: as they are, for a search of everyone's passages).
func ownedTerms(terms []string, chat string) []string {
	if chat == "" {
		return terms
	}
	p := ownerPrefix(chat)
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = p + t
	}
	return out
}

// convToken is a conversation as one word of the FTS5 index, so a search
// leaves a conversation out inside the index.
func convToken(conv string) string {
	h := sha256.Sum256([]byte(conv))
	return "v" + hex.EncodeToString(h[:8])
}

// ftsMatch is an FTS5 query for any of the terms: in chat's owned terms
// when chat is given, else in every passage's stems; not in the
// conversation except. Terms hold only letters and digits, so quoting
// them is enough.
func ftsMatch(terms []string, chat, except string) string {
	col := "stems"
	if chat != "" {
		col = "owned"
	}
	alts := make([]string, len(terms))
	for i, t := range ownedTerms(terms, chat) {
		alts[i] = `"` + t + `"`
	}
	q := col + " : (" + strings.Join(alts, " OR ") + ")"
	if except != "" {
		q += ` NOT conv : "` + convToken(except) + `"`
	}
	return q
}

// tsQuery is the PostgreSQL tsquery for any of the terms (in chat's
// owned terms when chat is given).
func tsQuery(terms []string, chat string) string {
	alts := make([]string, len(terms))
	for i, t := range ownedTerms(terms, chat) {
		alts[i] = "'" + t + "'"
	}
	return strings.Join(alts, " | ")
}
