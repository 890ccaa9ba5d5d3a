// Package replytext words what a turn tells its sender, in the sender's
// language: the reply for the turn's outcome (a denial or pairing code, a
// command's answer, an error explained, the reply made ready) and a
// plan's announcement and summary. It only reads the folded turn.
package replytext

import (
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/i18n/budgetmsg"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/providers"
)

// For is what the send step delivers for the turn's outcome; loc words
// a pairing code's expiry.
func For(t *turn.Turn, lang string, loc *time.Location) string {
	switch t.ReplyKind() {
	case "deny":
		if p := t.DenyPairing; p != nil {
			return pairing(lang, p, loc)
		}
		return i18n.Text(lang, i18n.AccessDenied)
	case "command":
		return t.Command.Reply
	case "error":
		if t.Ready != nil {
			return t.Ready.Text // a stopped plan explains itself
		}
		if f := t.Failure; f != nil && f.Class == turn.ClassOverBudget && f.ResetAt != nil {
			return budgetmsg.Text(lang, budgetmsg.Exceeded, ResetTime(*f.ResetAt, loc))
		}
		if t.Failure != nil && t.Failure.Class == providers.Unavailable.String() {
			return i18n.Text(lang, i18n.ProviderUnavailable)
		}
		return i18n.Text(lang, errorKey(t.Failure))
	}
	return t.Ready.Text
}

// pairing is what an unknown sender is told: their code and until when
// it is valid, or that they asked for too many.
func pairing(lang string, p *access.PairingOffer, loc *time.Location) string {
	if p.Limited {
		return i18n.AccessText(lang, i18n.AccessPairingLimited)
	}
	return i18n.AccessText(lang, i18n.AccessPairingCode, p.Code, i18n.PairingExpiry(p.ExpiresAt, loc))
}

func errorKey(f *turn.ProviderFailed) i18n.Key {
	if f == nil {
		return i18n.ErrUnknown
	}
	return errorClassKey(f.Class)
}

// classKeys words each provider failure class; any other is unknown.
var classKeys = map[string]i18n.Key{
	providers.RateLimited.String(): i18n.ErrRateLimited,
	providers.Auth.String():        i18n.ErrAuth,
	providers.Server.String():      i18n.ErrServer,
	providers.Timeout.String():     i18n.ErrTimeout,
	providers.BadRequest.String():  i18n.ErrBadRequest,
	providers.Malformed.String():   i18n.ErrMalformed,
}

func errorClassKey(class string) i18n.Key {
	if k, ok := classKeys[class]; ok {
		return k
	}
	return i18n.ErrUnknown
}

// PlanAnnounce announces a plan's steps, numbered.
func PlanAnnounce(lang string, steps []string) string {
	list := make([]string, len(steps))
	for i, s := range steps {
		list[i] = fmt.Sprintf("%d. %s", i+1, s)
	}
	return i18n.More(lang, i18n.PlanAnnounce, len(steps), strings.Join(list, "\n"))
}

// PlanSummary is the plan's final reply: how far it got, why it stopped
// if it did, and every step's result as the user would see it (a step's
// result may carry a task confirmation, which must not be lost).
func PlanSummary(t *turn.Turn, lang string, loc *time.Location) string {
	steps := t.Route.Steps
	var parts []string
	if f := t.StepFailure; t.PlanStopped() {
		why := i18n.Text(lang, errorClassKey(f.Class))
		if f.Class == turn.ClassOverBudget && f.ResetAt != nil {
			why = budgetmsg.Text(lang, budgetmsg.Exceeded, ResetTime(*f.ResetAt, loc))
		}
		parts = append(parts, i18n.More(lang, i18n.StepFailed, f.Index, len(steps), steps[f.Index-1])+"\n"+why)
	}
	parts = append(parts, i18n.More(lang, i18n.PlanDone, len(t.StepsDone), len(steps)))
	for i, r := range t.StepReplies {
		if r = strings.TrimSpace(r); r != "" {
			parts = append(parts, i18n.More(lang, i18n.StepDone, i+1, len(steps), steps[i])+"\n"+r)
		}
	}
	return strings.Join(parts, "\n\n")
}

// ResetTime words when a limit resets, in the owner's time zone.
func ResetTime(at time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return at.In(loc).Format("2006-01-02 15:04 MST")
}
