package build

import (
	"strings"
	"time"
	"unicode"

	"github.com/omega-gateway/omega/domain"
)

// ProposalStream holds one sender's build proposals: the question asked
// and the answer given.
func ProposalStream(senderKey string) string { return "buildproposal-" + senderKey }

// Proposal events.
type (
	// BuildProposed records a build offered to a person (by the model's
	// BUILD_PROPOSAL marker, or because their message named one), whose
	// yes or no is awaited.
	BuildProposed struct {
		Request string `json:"request"`
		Turn    string `json:"turn"`
		Origin  string `json:"origin"` // "marker" or "keywords"
	}
	// ProposalAnswered records the person's answer; BuildID is the build
	// a yes started.
	ProposalAnswered struct {
		Turn    string `json:"turn"`
		Yes     bool   `json:"yes"`
		Request string `json:"request,omitempty"`
		Origin  string `json:"origin,omitempty"`
		BuildID string `json:"build_id,omitempty"`
	}
)

func (BuildProposed) EventType() string    { return "BuildProposed" }
func (ProposalAnswered) EventType() string { return "ProposalAnswered" }

// Proposal is a sender's proposal stream folded.
type Proposal struct {
	Pending *BuildProposed
	// Answered is the last answer, so that the turn that gave it keeps
	// being an answer while it finishes.
	Answered *ProposalAnswered
	Version  int64
}

// Apply folds one event of a proposal stream.
func (p *Proposal) Apply(e domain.Payload, version int64, _ time.Time) {
	switch ev := e.(type) {
	case BuildProposed:
		p.Pending, p.Answered = &ev, nil
	case ProposalAnswered:
		p.Pending, p.Answered = nil, &ev
	}
	p.Version = version
}

// Awaits reports whether a message of turn is the answer to a proposal:
// one is pending (asked by another turn), or this turn answered it.
func (p Proposal) Awaits(turnID string) bool {
	if p.Answered != nil && p.Answered.Turn == turnID {
		return true
	}
	return p.Pending != nil && p.Pending.Turn != turnID
}

var yesWords = map[string]bool{
	"yes": true, "y": true, "yeah": true, "yep": true, "sure": true, "ok": true, "okay": true, "go": true, "go ahead": true,
	"sí": true, "si": true, "claro": true, "dale": true, "vale": true, "sim": true, "claro que sim": true,
	"oui": true, "d'accord": true, "ja": true, "klar": true, "certo": true, "va bene": true, "да": true, "давай": true,
}

var noWords = map[string]bool{
	"no": true, "n": true, "nope": true, "not now": true, "cancel": true, "não": true, "nao": true,
	"non": true, "nein": true, "nee": true, "нет": true,
}

// Answer reads a message as a yes or a no to a proposal, in any language
// omega speaks; ok is false when it is neither.
func Answer(text string) (yes, ok bool) {
	t := strings.ToLower(strings.TrimFunc(strings.TrimSpace(text), func(r rune) bool {
		return unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsSymbol(r)
	}))
	switch {
	case yesWords[t]:
		return true, true
	case noWords[t]:
		return false, true
	}
	return false, false
}

// keywords name a build request in the languages omega speaks: a
// message holding one is offered a build (and asked to confirm)
// instead of an ordinary reply.
var keywords = []string{
	"build me", "build an app", "build a program", "create an app", "make me an app", "develop an app", "write me a program", "code me",
	"constrúyeme", "construye una app", "crea una app", "desarrolla una app", "hazme una app", "programa una",
	"construa um", "crie um app", "desenvolva um app", "faça um app",
	"construis-moi", "crée une app", "développe une app",
	"bau mir", "erstelle eine app", "entwickle eine app", "programmiere mir",
	"costruiscimi", "crea un'app", "sviluppa un'app",
	"bouw een app", "maak een app", "ontwikkel een app",
	"создай приложение", "напиши программу", "разработай приложение", "собери приложение",
}

// HasKeyword reports whether text names a build request.
func HasKeyword(text string) bool {
	t := strings.ToLower(text)
	for _, k := range keywords {
		if strings.Contains(t, k) {
			return true
		}
	}
	return false
}

// Keywords lists the build keywords.
func Keywords() []string { return append([]string(nil), keywords...) }
