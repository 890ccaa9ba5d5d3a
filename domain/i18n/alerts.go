package i18n

import "fmt"

// AlertKey names a text omega sends its owner on its own initiative.
type AlertKey int

// The owner alerts.
const (
	AlertBugReport  AlertKey = iota // %s sender, %s description
	AlertLimitation                 // %s title, %s description, %s plan
)

var alertTexts = map[string][2]string{
	English: {
		"🐞 Bug report (from a conversation with %s): %s",
		"⚠ I hit a limitation: %s\n%s\nProposed plan: %s\nI added it to the heartbeat checklist.",
	},
	Spanish: {
		"🐞 Informe de error (de una conversación con %s): %s",
		"⚠ Encontré una limitación: %s\n%s\nPlan propuesto: %s\nLa añadí a la lista del heartbeat.",
	},
	Portuguese: {
		"🐞 Relatório de erro (de uma conversa com %s): %s",
		"⚠ Encontrei uma limitação: %s\n%s\nPlano proposto: %s\nAdicionei-a à lista do heartbeat.",
	},
	French: {
		"🐞 Rapport de bug (d'une conversation avec %s) : %s",
		"⚠ J'ai rencontré une limite : %s\n%s\nPlan proposé : %s\nJe l'ai ajoutée à la liste du heartbeat.",
	},
	German: {
		"🐞 Fehlerbericht (aus einem Gespräch mit %s): %s",
		"⚠ Ich bin an eine Grenze gestoßen: %s\n%s\nVorgeschlagener Plan: %s\nIch habe sie zur Heartbeat-Liste hinzugefügt.",
	},
	Italian: {
		"🐞 Segnalazione di bug (da una conversazione con %s): %s",
		"⚠ Ho incontrato un limite: %s\n%s\nPiano proposto: %s\nL'ho aggiunto alla lista dell'heartbeat.",
	},
	Dutch: {
		"🐞 Foutmelding (uit een gesprek met %s): %s",
		"⚠ Ik liep tegen een beperking aan: %s\n%s\nVoorgesteld plan: %s\nIk heb het aan de heartbeat-lijst toegevoegd.",
	},
	Russian: {
		"🐞 Сообщение об ошибке (из разговора с %s): %s",
		"⚠ Я столкнулся с ограничением: %s\n%s\nПредлагаемый план: %s\nЯ добавил его в список heartbeat.",
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
