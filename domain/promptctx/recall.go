package promptctx

import (
	"sort"
	"strings"
	"unicode"
)

// minRecallWord is the shortest message word that can recall a summary:
// shorter words ("the", "and", "que") match almost everything.
const minRecallWord = 4

// recallStop are common words of at least minRecallWord letters that say
// nothing about a conversation's subject.
var recallStop = map[string]bool{
	"that": true, "this": true, "what": true, "when": true, "where": true, "with": true, "about": true,
	"have": true, "were": true, "your": true, "there": true, "they": true, "them": true, "then": true,
	"from": true, "would": true, "could": true, "should": true, "which": true, "remember": true,
	"time": true, "last": true, "earlier": true, "talked": true, "discussed": true, "told": true,
	"mentioned": true, "said": true, "yesterday": true, "week": true, "please": true, "tell": true,
	"recuerdas": true, "dijiste": true, "ayer": true, "sobre": true, "cuando": true, "donde": true,
	"para": true, "como": true, "este": true, "esta": true, "hablamos": true, "semana": true,
}

// recallWords are the distinct subject words of a message.
func recallWords(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words(text) {
		if len([]rune(w)) < minRecallWord || recallStop[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// recallScore counts the message's subject words that a summary holds,
// each at the start of one of its words (so "trip" recalls "trips").
func recallScore(subject []string, summary string) int {
	tokens := words(summary)
	score := 0
	for _, w := range subject {
		for _, t := range tokens {
			if strings.HasPrefix(t, w) {
				score++
				break
			}
		}
	}
	return score
}

// MatchSummaries returns at most n of candidates (newest first) that share
// subject words with message, best match first and, among equals, the
// newer first: the seed's recall of past conversations by what the user
// asks about, not only by recency.
func MatchSummaries(message string, candidates []string, n int) []string {
	subject := recallWords(message)
	if len(subject) == 0 || n <= 0 {
		return nil
	}
	type scored struct {
		text  string
		score int
	}
	var hits []scored
	for _, c := range candidates {
		if s := recallScore(subject, c); s > 0 {
			hits = append(hits, scored{c, s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := make([]string, 0, min(n, len(hits)))
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, h.text)
	}
	return out
}
