package i18n

import "fmt"

// AlertKey names a text omega sends its owner on its own initiative.
type AlertKey int

// The owner alerts.
const (
	AlertBugReport  AlertKey = iota // %s sender, %s description
	AlertLimitation                 // %s title, %s description, %s plan
	AlertBudget                     // %d percent, %s period, %s scope, %s limit, %s reset time
	AlertRunaway                    // %s loop, %d calls, %s window, %s until
)

var alertTexts = map[string][4]string{
	English: {
		"🐞 Bug report (from a conversation with %s): %s",
		"⚠ I hit a limitation: %s\n%s\nProposed plan: %s\nI added it to the heartbeat checklist.",
		"💸 Spending at %d%% of the %s limit for %s (%s); it resets %s.",
		"🛑 Runaway guard: %s made %d provider calls within %s; paused until %s.",
	},
	Spanish: {
		"🐞 Informe de error (de una conversación con %s): %s",
		"⚠ Encontré una limitación: %s\n%s\nPlan propuesto: %s\nLa añadí a la lista del heartbeat.",
		"💸 Gasto al %d%% del límite %s para %s (%s); se reinicia el %s.",
		"🛑 Freno de bucles: %s hizo %d llamadas al proveedor en %s; en pausa hasta las %s.",
	},
	Portuguese: {
		"🐞 Relatório de erro (de uma conversa com %s): %s",
		"⚠ Encontrei uma limitação: %s\n%s\nPlano proposto: %s\nAdicionei-a à lista do heartbeat.",
		"💸 Gasto em %d%% do limite %s para %s (%s); reinicia em %s.",
		"🛑 Freio de loops: %s fez %d chamadas ao provedor em %s; pausado até %s.",
	},
	French: {
		"🐞 Rapport de bug (d'une conversation avec %s) : %s",
		"⚠ J'ai rencontré une limite : %s\n%s\nPlan proposé : %s\nJe l'ai ajoutée à la liste du heartbeat.",
		"💸 Dépenses à %d %% de la limite %s pour %s (%s) ; remise à zéro le %s.",
		"🛑 Garde-fou : %s a fait %d appels au fournisseur en %s ; en pause jusqu'à %s.",
	},
	German: {
		"🐞 Fehlerbericht (aus einem Gespräch mit %s): %s",
		"⚠ Ich bin an eine Grenze gestoßen: %s\n%s\nVorgeschlagener Plan: %s\nIch habe sie zur Heartbeat-Liste hinzugefügt.",
		"💸 Ausgaben bei %d %% des %s-Limits für %s (%s); es wird %s zurückgesetzt.",
		"🛑 Schleifenschutz: %s hat %d Anbieteraufrufe in %s gemacht; pausiert bis %s.",
	},
	Italian: {
		"🐞 Segnalazione di bug (da una conversazione con %s): %s",
		"⚠ Ho incontrato un limite: %s\n%s\nPiano proposto: %s\nL'ho aggiunto alla lista dell'heartbeat.",
		"💸 Spesa al %d%% del limite %s per %s (%s); si azzera il %s.",
		"🛑 Blocco dei cicli: %s ha fatto %d chiamate al fornitore in %s; in pausa fino alle %s.",
	},
	Dutch: {
		"🐞 Foutmelding (uit een gesprek met %s): %s",
		"⚠ Ik liep tegen een beperking aan: %s\n%s\nVoorgesteld plan: %s\nIk heb het aan de heartbeat-lijst toegevoegd.",
		"💸 Uitgaven op %d%% van de %s-limiet voor %s (%s); reset op %s.",
		"🛑 Lusbewaking: %s deed %d aanroepen bij de provider binnen %s; gepauzeerd tot %s.",
	},
	Russian: {
		"🐞 Сообщение об ошибке (из разговора с %s): %s",
		"⚠ Я столкнулся с ограничением: %s\n%s\nПредлагаемый план: %s\nЯ добавил его в список heartbeat.",
		"💸 Расход достиг %d%% лимита (%s) для %s (%s); сброс %s.",
		"🛑 Защита от зацикливания: %s сделал %d вызовов провайдера за %s; пауза до %s.",
	},
}

// Alert returns an owner alert in lang (English when lang lacks it),
// formatted with args.
func Alert(lang string, key AlertKey, args ...any) string {
	texts, ok := alertTexts[OrDefault(lang)]
	if !ok {
		texts = alertTexts[Default]
	}
	return fmt.Sprintf(texts[key], args...)
}
