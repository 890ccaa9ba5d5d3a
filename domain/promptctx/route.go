package promptctx

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Route is the local pre-filter's verdict on a message: whether it may
// need a plan, so that the classifier should be asked, and why.
type Route struct {
	Classify bool
	Reason   string // "list", "sequence", "work", "long"; "" when direct
}

// longRequest is the length (in runes) above which a message goes to the
// classifier whatever it says: long requests are where plans come from.
const longRequest = 400

// Sequencing phrases: any one of them says the request has ordered parts.
var sequenceKW = []string{
	// English
	"and then", "step by step", "after that", "afterwards", "and finally", "once that's done", "once done",
	// Spanish
	"y luego", "y después", "y despues", "después de eso", "paso a paso", "a continuación", "y finalmente", "por último",
	// German
	"und dann", "danach", "anschließend", "schritt für schritt", "zum schluss", "und zuletzt",
	// French
	"et ensuite", "puis ", "ensuite", "étape par étape", "après ça", "et enfin",
	// Italian
	"e poi", "dopodiché", "dopo di che", "passo dopo passo", "passo passo", "successivamente", "e infine",
	// Portuguese
	"e depois", "depois disso", "em seguida", "passo a passo", "e por fim", "e então",
}

// A "first" word followed later by a "then" word also orders the parts.
var (
	firstKW = []string{"first", "primero", "zuerst", "d'abord", "prima", "primeiro"}
	thenKW  = []string{"then", "luego", "después", "dann", "puis", "ensuite", "poi", "depois", "então"}
)

// Work words: verbs and objects of the long, dependent work a plan is
// for. Two distinct ones ("research ... compare", "prepare the report")
// make a request worth classifying; one ("write Ana a note") does not.
var workKW = []string{
	// English
	"research", "investigate", "analy", "compare", "summar", "write", "draft", "prepare", "build", "implement",
	"refactor", "migrate", "report", "gather", "collect", "review",
	// Spanish
	"investiga", "analiza", "compara", "resum", "escribe", "redacta", "prepara", "implementa", "informe", "recopila",
	// German
	"recherchier", "untersuch", "analysier", "vergleich", "zusammenfass", "schreib", "erstell", "bericht", "sammel",
	// French
	"recherche", "analyse", "compare", "résum", "rédige", "écris", "prépare", "rapport", "rassemble",
	// Italian
	"ricerca", "cerca informazioni", "analizza", "confronta", "riassum", "scrivi", "prepara", "relazione", "rapporto",
	// Portuguese
	"pesquis", "analis", "compar", "escrev", "redij", "prepar", "relatório", "reúna",
}

// NeedsPlan is a cheap local pre-filter in front of the classification
// call. Greetings, questions and reminders, the large majority of
// messages, are answered directly without asking the classifier; a
// message that lists steps, orders its parts, names several pieces of
// work or is long goes on to the classifier, which still decides. It errs
// towards classifying: a wrongly passed message costs one call, a wrongly
// stopped one loses its plan.
func NeedsPlan(message string) Route {
	msg := strings.ToLower(message)
	switch {
	case listItems(msg) >= 2:
		return Route{Classify: true, Reason: "list"}
	case matchAny(msg, sequenceKW) || (matchAny(msg, firstKW) && matchAny(msg, thenKW)):
		return Route{Classify: true, Reason: "sequence"}
	case countMatches(msg, workKW) >= 2:
		return Route{Classify: true, Reason: "work"}
	case utf8.RuneCountInString(msg) > longRequest:
		return Route{Classify: true, Reason: "long"}
	}
	return Route{}
}

// listItems counts the lines that start like a list item: "1.", "2)",
// "-", "*" or "•".
func listItems(msg string) int {
	n := 0
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* ") || strings.HasPrefix(line, "• ") {
			n++
			continue
		}
		digits := strings.TrimLeftFunc(line, unicode.IsDigit)
		if len(digits) < len(line) && (strings.HasPrefix(digits, ".") || strings.HasPrefix(digits, ")")) {
			n++
		}
	}
	return n
}

// countMatches counts the keywords found at a word start; keywords that
// share a word (the stem "compar" and "compare") count once per word.
func countMatches(msg string, keywords []string) int {
	words := map[int]bool{}
	for _, kw := range keywords {
		if at := indexWordStart(msg, kw); at >= 0 {
			words[at] = true
		}
	}
	return len(words)
}

// indexWordStart is matchWordStart returning where kw first occurs at a
// word start, or -1.
func indexWordStart(msg, kw string) int {
	for i := 0; i <= len(msg)-len(kw); {
		j := strings.Index(msg[i:], kw)
		if j < 0 {
			return -1
		}
		at := i + j
		if at == 0 {
			return 0
		}
		if prev, _ := utf8.DecodeLastRuneInString(msg[:at]); !unicode.IsLetter(prev) && !unicode.IsDigit(prev) {
			return at
		}
		_, size := utf8.DecodeRuneInString(msg[at:])
		i = at + size
	}
	return -1
}
