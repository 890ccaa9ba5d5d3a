// Package promptctx assembles what the provider sees for one turn: the
// keyword-gated system prompt, the data blocks loaded for it and the minimal
// continuation prompt for a resumed CLI session. It is pure: the caller
// loads facts, tasks and history and passes them in.
package promptctx

import (
	"strings"
)

// Sections says which optional prompt sections and data blocks a message
// needs. Loading only what a message needs keeps "hello" cheap.
type Sections struct {
	Scheduling bool // ## Scheduling section
	Tasks      bool // pending tasks block (always with Scheduling: the model must check duplicates)
	Projects   bool // ## Projects section
	Meta       bool // ## Meta section and the heartbeat checklist
	Recall     bool // summaries of past conversations
	Profile    bool // user facts (always with Scheduling: timezone is needed to convert to UTC)
	Outcomes   bool // recent reward outcomes
}

// Keyword lists. A keyword matches at the start of a word of the lower-cased
// message, so prefixes such as "recuérd" or "lembr" cover their inflections
// while "due" does not fire inside "subdued". Multi-word keywords match the
// same way.
var (
	schedulingKW = []string{
		// English
		"remind", "schedule", "alarm", "timer", "tomorrow", "tonight", "next week", "next month",
		"daily", "weekly", "monthly", "weekday", "every morning", "every day", "every evening",
		"every night", "every week", "recurring", "appointment", "cancel", "reschedule",
		"update task", "due", "at noon", "in an hour", "in 5 minutes", "in 10 minutes",
		// Spanish
		"recuérd", "recuerd", "recordar", "recordatorio", "alarma", "agenda", "programa",
		"mañana", "cada día", "todos los días", "semanal", "cancela",
		// Portuguese
		"lembr", "agendar", "amanhã", "todo dia", "todos os dias", "cancelar",
		// French
		"rappel", "rappelle", "programme", "demain", "chaque jour", "tous les jours", "annule",
		// German
		"erinner", "wecker", "morgen", "täglich", "wöchentlich", "jeden tag", "übermorgen",
		// Italian
		"ricorda", "promemoria", "sveglia", "domani", "ogni giorno", "annulla", "programma",
		// Dutch
		"herinner", "wekker", "elke dag", "dagelijks", "annuleer", "inplannen",
		// Russian
		"напомн", "напоминан", "будильник", "завтра", "каждый день", "ежедневно", "отмени", "запланир",
	}
	tasksKW = []string{
		"task", "reminder", "pending", "scheduled", "what's coming", "my tasks", "my reminders",
		"tarea", "pendiente", "tarefa", "lembrete", "tâche", "aufgabe", "compito", "attività", "taak",
		"задач", "напоминани",
	}
	projectsKW = []string{
		"project", "activate", "deactivate",
		"proyecto", "projeto", "projet", "projekt", "progetto", "проект",
	}
	metaKW = []string{
		"skill", "improve", "bug", "limitation", "whatsapp", "qr", "pair", "personality",
		"forget", "purge", "heartbeat", "monitor", "watchlist", "keep an eye", "self-heal", "lesson",
		"habilidad", "personalidad", "olvida", "monitoriza", "vigila",
		"personalidade", "esqueça", "esquece", "monitore",
		"personnalité", "oublie", "surveille",
		"persönlichkeit", "vergiss", "überwach",
		"personalità", "dimentica", "monitora",
		"persoonlijkheid", "vergeet", "bewaak",
		"личност", "забудь", "следи",
	}
	recallKW = []string{
		"remember", "last time", "you said", "earlier", "we talked", "we discussed", "you told",
		"you mentioned", "yesterday", "last week",
		"recuerdas", "dijiste", "ayer", "você disse", "lembra", "ontem", "souviens", "hier", "tu as dit",
		"erinnerst", "gestern", "du hast gesagt", "ricordi", "ieri", "hai detto", "weet je nog", "gisteren",
		"помнишь", "вчера", "ты сказал",
	}
	profileKW = []string{
		"who am i", "my name", "about me", "my profile", "my facts", "what do you know",
		"quién soy", "mi nombre", "sobre mí", "quem sou", "meu nome", "sobre mim", "qui suis", "mon nom",
		"wer bin ich", "mein name", "chi sono", "mio nome", "wie ben ik", "mijn naam", "кто я", "меня зовут",
	}
	outcomesKW = []string{
		"how did i", "how am i doing", "reward", "outcome", "feedback", "performance",
		"cómo lo hice", "resultado", "como me saí", "desempenho", "comment j'ai", "résultat",
		"wie habe ich", "ergebnis", "come ho fatto", "risultato", "hoe deed ik", "resultaat", "результат",
	}
)

// Gate decides which sections a message needs, applying the seed's
// cascade: scheduling implies tasks and profile; recall and tasks imply
// profile.
func Gate(text string) Sections {
	msg := strings.ToLower(text)
	var s Sections
	s.Scheduling = matchAny(msg, schedulingKW)
	s.Tasks = s.Scheduling || matchAny(msg, tasksKW)
	s.Projects = matchAny(msg, projectsKW)
	s.Meta = matchAny(msg, metaKW)
	s.Recall = matchAny(msg, recallKW)
	s.Outcomes = matchAny(msg, outcomesKW)
	s.Profile = matchAny(msg, profileKW) || s.Scheduling || s.Recall || s.Tasks
	return s
}

func matchAny(msg string, keywords []string) bool {
	for _, kw := range keywords {
		if matchWordStart(msg, kw) {
			return true
		}
	}
	return false
}

// matchWordStart reports whether kw occurs in msg starting at a word
// boundary.
func matchWordStart(msg, kw string) bool { return indexWordStart(msg, kw) >= 0 }
