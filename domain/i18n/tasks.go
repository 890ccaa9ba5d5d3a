package i18n

import "fmt"

// Texts of firing tasks and of the task list, in their own catalogue so
// the core catalogue stays as it was.
const (
	TaskLate        Key = "task.late"         // %s due time (local)
	TaskStateLate   Key = "task.state_late"   //
	TaskStatePend   Key = "task.state_pend"   //
	TaskStateFailed Key = "task.state_failed" // %s reason
	TaskNextDue     Key = "task.next_due"     // %s due time (local)
)

// TaskKeys lists the keys of the task catalogue.
func TaskKeys() []Key {
	return []Key{TaskLate, TaskStateLate, TaskStatePend, TaskStateFailed, TaskNextDue}
}

// TaskText returns a text of the task catalogue in lang (English when
// lang lacks it), formatted with args.
func TaskText(lang string, key Key, args ...any) string {
	s, ok := taskTexts[OrDefault(lang)][key]
	if !ok {
		if s, ok = taskTexts[Default][key]; !ok {
			return string(key)
		}
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

var taskTexts = map[string]map[Key]string{
	English:    {TaskLate: "(late: due %s)", TaskStateLate: "late", TaskStatePend: "pending", TaskStateFailed: "failed: %s", TaskNextDue: "next %s"},
	Spanish:    {TaskLate: "(con retraso: era para las %s)", TaskStateLate: "con retraso", TaskStatePend: "pendiente", TaskStateFailed: "falló: %s", TaskNextDue: "próxima %s"},
	Portuguese: {TaskLate: "(atrasado: era para %s)", TaskStateLate: "atrasado", TaskStatePend: "pendente", TaskStateFailed: "falhou: %s", TaskNextDue: "próxima %s"},
	French:     {TaskLate: "(en retard : prévu à %s)", TaskStateLate: "en retard", TaskStatePend: "en attente", TaskStateFailed: "échec : %s", TaskNextDue: "prochaine %s"},
	German:     {TaskLate: "(verspätet: fällig %s)", TaskStateLate: "verspätet", TaskStatePend: "ausstehend", TaskStateFailed: "fehlgeschlagen: %s", TaskNextDue: "nächste %s"},
	Italian:    {TaskLate: "(in ritardo: previsto alle %s)", TaskStateLate: "in ritardo", TaskStatePend: "in attesa", TaskStateFailed: "fallito: %s", TaskNextDue: "prossima %s"},
	Dutch:      {TaskLate: "(te laat: gepland om %s)", TaskStateLate: "te laat", TaskStatePend: "gepland", TaskStateFailed: "mislukt: %s", TaskNextDue: "volgende %s"},
	Russian:    {TaskLate: "(с опозданием: было на %s)", TaskStateLate: "с опозданием", TaskStatePend: "ожидает", TaskStateFailed: "не удалось: %s", TaskNextDue: "следующее %s"},
}
