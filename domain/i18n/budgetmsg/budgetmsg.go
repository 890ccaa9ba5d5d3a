// Package budgetmsg holds what a person is told about the spending limits,
// in every language omega speaks.
package budgetmsg

import (
	"fmt"

	"github.com/omega-gateway/omega/domain/i18n"
)

// Key names what a person is told about the spending limits.
type Key int

// The budget texts.
const (
	Exceeded     Key = iota // %s when the limit resets
	Paused                  // %s when the pause ends
	Usage                   // %s spent, %s left, %s reset time (one period)
	NoLimit                 // %s spent
	YouToday                // the label of the sender's own line for the day
	YouThisMonth            // ... for the month
	AllToday                // the label of everything together for the day
	AllThisMonth            // ... for the month
	Spent                   // %d tokens, %.4f US dollars, %d calls
)

var budgetTexts = map[string][9]string{
	i18n.English: {
		"I've reached my spending limit for now, so I can't answer this one. The limit resets %s; please write again then.",
		"I've made too many requests in a short time and paused myself to be safe. I'll be back %s.",
		"%s: spent %s, left %s, resets %s",
		"%s: spent %s, no limit",
		"you, today",
		"you, this month",
		"all, today",
		"all, this month",
		"%dtok, $%.4f (%d calls)",
	},
	i18n.Spanish: {
		"He llegado a mi límite de gasto por ahora, así que no puedo responder a esto. El límite se reinicia %s; escríbeme de nuevo entonces.",
		"He hecho demasiadas peticiones en poco tiempo y me he pausado por seguridad. Vuelvo %s.",
		"%s: gastado %s, queda %s, se reinicia %s",
		"%s: gastado %s, sin límite",
		"tú, hoy",
		"tú, este mes",
		"todos, hoy",
		"todos, este mes",
		"%dtok, $%.4f (%d llamadas)",
	},
	i18n.Portuguese: {
		"Cheguei ao meu limite de gastos por agora, então não posso responder a isto. O limite reinicia %s; escreva de novo depois.",
		"Fiz pedidos demais em pouco tempo e me pausei por segurança. Volto %s.",
		"%s: gasto %s, resta %s, reinicia %s",
		"%s: gasto %s, sem limite",
		"você, hoje",
		"você, este mês",
		"todos, hoje",
		"todos, este mês",
		"%dtok, $%.4f (%d chamadas)",
	},
	i18n.French: {
		"J'ai atteint ma limite de dépenses pour l'instant, je ne peux donc pas répondre à ceci. La limite est remise à zéro %s ; réécris-moi à ce moment-là.",
		"J'ai fait trop de requêtes en peu de temps et je me suis mis en pause par sécurité. Je reviens %s.",
		"%s : dépensé %s, reste %s, remise à zéro %s",
		"%s : dépensé %s, sans limite",
		"toi, aujourd'hui",
		"toi, ce mois-ci",
		"tous, aujourd'hui",
		"tous, ce mois-ci",
		"%dtok, $%.4f (%d appels)",
	},
	i18n.German: {
		"Ich habe mein Ausgabenlimit für den Moment erreicht und kann darauf nicht antworten. Das Limit wird %s zurückgesetzt; schreib mir dann bitte noch einmal.",
		"Ich habe in kurzer Zeit zu viele Anfragen gestellt und mich sicherheitshalber pausiert. Ich bin %s zurück.",
		"%s: ausgegeben %s, übrig %s, zurückgesetzt %s",
		"%s: ausgegeben %s, kein Limit",
		"du, heute",
		"du, diesen Monat",
		"alle, heute",
		"alle, diesen Monat",
		"%dtok, $%.4f (%d Aufrufe)",
	},
	i18n.Italian: {
		"Ho raggiunto il mio limite di spesa per ora, quindi non posso rispondere. Il limite si azzera %s; scrivimi di nuovo allora.",
		"Ho fatto troppe richieste in poco tempo e mi sono messo in pausa per sicurezza. Torno %s.",
		"%s: speso %s, restano %s, si azzera %s",
		"%s: speso %s, nessun limite",
		"tu, oggi",
		"tu, questo mese",
		"tutti, oggi",
		"tutti, questo mese",
		"%dtok, $%.4f (%d chiamate)",
	},
	i18n.Dutch: {
		"Ik heb mijn uitgavenlimiet voor nu bereikt, dus hier kan ik niet op antwoorden. De limiet wordt %s gereset; schrijf me dan opnieuw.",
		"Ik heb in korte tijd te veel verzoeken gedaan en mezelf voor de zekerheid gepauzeerd. Ik ben %s terug.",
		"%s: uitgegeven %s, over %s, reset %s",
		"%s: uitgegeven %s, geen limiet",
		"jij, vandaag",
		"jij, deze maand",
		"iedereen, vandaag",
		"iedereen, deze maand",
		"%dtok, $%.4f (%d aanroepen)",
	},
	i18n.Russian: {
		"Я достиг лимита расходов на сейчас, поэтому не могу ответить на это. Лимит сбросится %s; напишите мне тогда снова.",
		"Я сделал слишком много запросов за короткое время и поставил себя на паузу для безопасности. Вернусь %s.",
		"%s: потрачено %s, осталось %s, сброс %s",
		"%s: потрачено %s, без лимита",
		"вы, сегодня",
		"вы, в этом месяце",
		"все, сегодня",
		"все, в этом месяце",
		"%dtok, $%.4f (%d вызовов)",
	},
}

// Text returns a budget text in lang (English when lang lacks it),
// formatted with args.
func Text(lang string, key Key, args ...any) string {
	texts, ok := budgetTexts[i18n.OrDefault(lang)]
	if !ok {
		texts = budgetTexts[i18n.Default]
	}
	return fmt.Sprintf(texts[key], args...)
}
