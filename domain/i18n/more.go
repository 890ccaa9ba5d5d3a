package i18n

import "fmt"

// Texts of the command answers and multi-step plans. They live in their
// own catalogue so the core catalogue's key list stays as it was.
const (
	StatusReport     Key = "cmd.status"         // %s uptime, %s provider, %s model, %s channels, %s sandbox, %s store, %d facts, %d tasks, %d conversations
	UptimeReport     Key = "cmd.uptime"         // %s duration
	FactsList        Key = "cmd.facts"          // %s lines
	MemoryReport     Key = "cmd.memory"         // %d conversations, %d messages, %d facts
	TasksList        Key = "cmd.tasks"          // %s lines
	ProjectsList     Key = "cmd.projects"       // %s lines
	ProjectOn        Key = "cmd.project_on"     // %s project
	ProjectOff       Key = "cmd.project_off"    //
	ProjectUnknown   Key = "cmd.project_none"   // %s project
	HeartbeatReport  Key = "cmd.heartbeat"      // %d minutes (as "min": no plural to get wrong), %s checklist lines
	LearningList     Key = "cmd.learning"       // %s lines
	SkillsList       Key = "cmd.skills"         // %s lines
	NothingYet       Key = "cmd.nothing"        //
	WhatsAppDisabled Key = "whatsapp.disabled"  //
	WhatsAppQRSent   Key = "whatsapp.qr_sent"   //
	CancelUsage      Key = "cmd.cancel_usage"   //
	CancelAmbiguous  Key = "cmd.cancel_many"    // %s id prefix
	LanguageCurrent  Key = "lang.current"       // %s language, %s supported list
	PlanAnnounce     Key = "plan.announce"      // %d steps, %s numbered list
	StepDone         Key = "plan.step_done"     // %d step, %d of, %s step text
	StepFailed       Key = "plan.step_failed"   // %d step, %d of, %s step text
	PlanDone         Key = "plan.done"          // %d completed, %d of
	HeartbeatNext    Key = "cmd.heartbeat_next" // %s time of the next check-in, %s suppressed sections
	SelfHealGaveUp   Key = "selfheal.gave_up"   // %d attempts, %s anomaly, %s attempts tried
)

// MoreKeys lists the keys of the command and plan catalogue.
func MoreKeys() []Key {
	return []Key{StatusReport, UptimeReport, FactsList, MemoryReport, TasksList, ProjectsList, ProjectOn, ProjectOff,
		ProjectUnknown, HeartbeatReport, LearningList, SkillsList, NothingYet, WhatsAppDisabled, WhatsAppQRSent,
		CancelUsage, CancelAmbiguous, LanguageCurrent, PlanAnnounce, StepDone, StepFailed, PlanDone, HeartbeatNext, SelfHealGaveUp}
}

// More returns a text of the command and plan catalogue in lang (English
// when lang lacks it), formatted with args.
func More(lang string, key Key, args ...any) string {
	s, ok := more[OrDefault(lang)][key]
	if !ok {
		if s, ok = more[Default][key]; !ok {
			return string(key)
		}
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

var more = map[string]map[Key]string{
	English: {
		StatusReport: "Uptime: %s\nProvider: %s (%s)\nChannels: %s\nSandbox: %s\nStore: %s\nFacts: %d · Pending tasks: %d · Conversations: %d",
		UptimeReport: "Up for %s.", FactsList: "What I know about you:\n%s",
		MemoryReport: "Conversations: %d\nMessages: %d\nFacts: %d", TasksList: "Your pending tasks:\n%s",
		ProjectsList: "Projects:\n%s", ProjectOn: "Project %s activated.", ProjectOff: "Project deactivated.",
		ProjectUnknown: "There is no project called %s.", HeartbeatReport: "Heartbeat interval: %d min.\nChecklist:\n%s",
		LearningList: "What I've learned:\n%s", SkillsList: "Skills:\n%s", NothingYet: "Nothing here yet.",
		WhatsAppDisabled: "WhatsApp is not enabled.", WhatsAppQRSent: "I sent you a QR code: scan it with WhatsApp to pair.",
		CancelUsage: "Usage: /cancel <task id>", CancelAmbiguous: "%s matches several tasks: type more of the id.",
		LanguageCurrent: "Current language: %s. Available: %s.", PlanAnnounce: "I'll do this in %d steps:\n%s",
		StepDone: "✓ Step %d/%d: %s", StepFailed: "✗ Step %d/%d failed: %s", PlanDone: "Done: %d of %d steps completed.",
		HeartbeatNext: "Next check-in: %s\nSuppressed sections: %s", SelfHealGaveUp: "Self-healing gave up after %d attempts and needs you: %s\nWhat was tried:\n%s",
	},
	Spanish: {
		StatusReport: "Tiempo activo: %s\nProveedor: %s (%s)\nCanales: %s\nSandbox: %s\nAlmacén: %s\nDatos: %d · Tareas pendientes: %d · Conversaciones: %d",
		UptimeReport: "En marcha desde hace %s.", FactsList: "Lo que sé de ti:\n%s",
		MemoryReport: "Conversaciones: %d\nMensajes: %d\nDatos: %d", TasksList: "Tus tareas pendientes:\n%s",
		ProjectsList: "Proyectos:\n%s", ProjectOn: "Proyecto %s activado.", ProjectOff: "Proyecto desactivado.",
		ProjectUnknown: "No existe el proyecto %s.", HeartbeatReport: "Intervalo del heartbeat: %d min.\nLista:\n%s",
		LearningList: "Lo que he aprendido:\n%s", SkillsList: "Habilidades:\n%s", NothingYet: "Nada por aquí todavía.",
		WhatsAppDisabled: "WhatsApp no está activado.", WhatsAppQRSent: "Te envié un código QR: escanéalo con WhatsApp para vincularlo.",
		CancelUsage: "Uso: /cancel <id de tarea>", CancelAmbiguous: "%s coincide con varias tareas: escribe más del id.",
		LanguageCurrent: "Idioma actual: %s. Disponibles: %s.", PlanAnnounce: "Lo haré en %d pasos:\n%s",
		StepDone: "✓ Paso %d/%d: %s", StepFailed: "✗ El paso %d/%d falló: %s", PlanDone: "Listo: %d de %d pasos completados.",
		HeartbeatNext: "Próxima revisión: %s\nSecciones silenciadas: %s", SelfHealGaveUp: "La autorreparación se rindió tras %d intentos y te necesita: %s\nLo que se intentó:\n%s",
	},
	Portuguese: {
		StatusReport: "Tempo ativo: %s\nProvedor: %s (%s)\nCanais: %s\nSandbox: %s\nArmazenamento: %s\nFatos: %d · Tarefas pendentes: %d · Conversas: %d",
		UptimeReport: "Ativo há %s.", FactsList: "O que sei sobre você:\n%s",
		MemoryReport: "Conversas: %d\nMensagens: %d\nFatos: %d", TasksList: "Suas tarefas pendentes:\n%s",
		ProjectsList: "Projetos:\n%s", ProjectOn: "Projeto %s ativado.", ProjectOff: "Projeto desativado.",
		ProjectUnknown: "Não existe o projeto %s.", HeartbeatReport: "Intervalo do heartbeat: %d min.\nLista:\n%s",
		LearningList: "O que aprendi:\n%s", SkillsList: "Habilidades:\n%s", NothingYet: "Nada aqui ainda.",
		WhatsAppDisabled: "O WhatsApp não está ativado.", WhatsAppQRSent: "Enviei um código QR: escaneie com o WhatsApp para parear.",
		CancelUsage: "Uso: /cancel <id da tarefa>", CancelAmbiguous: "%s corresponde a várias tarefas: digite mais do id.",
		LanguageCurrent: "Idioma atual: %s. Disponíveis: %s.", PlanAnnounce: "Vou fazer isso em %d passos:\n%s",
		StepDone: "✓ Passo %d/%d: %s", StepFailed: "✗ O passo %d/%d falhou: %s", PlanDone: "Pronto: %d de %d passos concluídos.",
		HeartbeatNext: "Próxima verificação: %s\nSeções silenciadas: %s", SelfHealGaveUp: "A autocorreção desistiu após %d tentativas e precisa de você: %s\nO que foi tentado:\n%s",
	},
	French: {
		StatusReport: "Disponibilité : %s\nFournisseur : %s (%s)\nCanaux : %s\nSandbox : %s\nStockage : %s\nFaits : %d · Tâches en attente : %d · Conversations : %d",
		UptimeReport: "En service depuis %s.", FactsList: "Ce que je sais de vous :\n%s",
		MemoryReport: "Conversations : %d\nMessages : %d\nFaits : %d", TasksList: "Vos tâches en attente :\n%s",
		ProjectsList: "Projets :\n%s", ProjectOn: "Projet %s activé.", ProjectOff: "Projet désactivé.",
		ProjectUnknown: "Il n'y a pas de projet %s.", HeartbeatReport: "Intervalle du heartbeat : %d min.\nListe :\n%s",
		LearningList: "Ce que j'ai appris :\n%s", SkillsList: "Compétences :\n%s", NothingYet: "Rien pour l'instant.",
		WhatsAppDisabled: "WhatsApp n'est pas activé.", WhatsAppQRSent: "Je vous ai envoyé un code QR : scannez-le avec WhatsApp pour l'associer.",
		CancelUsage: "Usage : /cancel <id de tâche>", CancelAmbiguous: "%s correspond à plusieurs tâches : tapez plus de l'id.",
		LanguageCurrent: "Langue actuelle : %s. Disponibles : %s.", PlanAnnounce: "Je vais faire cela en %d étapes :\n%s",
		StepDone: "✓ Étape %d/%d : %s", StepFailed: "✗ L'étape %d/%d a échoué : %s", PlanDone: "Terminé : %d étapes sur %d réussies.",
		HeartbeatNext: "Prochaine vérification : %s\nSections masquées : %s", SelfHealGaveUp: "L'auto-réparation a abandonné après %d tentatives et a besoin de vous : %s\nCe qui a été essayé :\n%s",
	},
	German: {
		StatusReport: "Laufzeit: %s\nAnbieter: %s (%s)\nKanäle: %s\nSandbox: %s\nSpeicher: %s\nFakten: %d · Offene Aufgaben: %d · Gespräche: %d",
		UptimeReport: "Läuft seit %s.", FactsList: "Was ich über dich weiß:\n%s",
		MemoryReport: "Gespräche: %d\nNachrichten: %d\nFakten: %d", TasksList: "Deine offenen Aufgaben:\n%s",
		ProjectsList: "Projekte:\n%s", ProjectOn: "Projekt %s aktiviert.", ProjectOff: "Projekt deaktiviert.",
		ProjectUnknown: "Es gibt kein Projekt %s.", HeartbeatReport: "Heartbeat-Intervall: %d Min.\nCheckliste:\n%s",
		LearningList: "Was ich gelernt habe:\n%s", SkillsList: "Fähigkeiten:\n%s", NothingYet: "Noch nichts hier.",
		WhatsAppDisabled: "WhatsApp ist nicht aktiviert.", WhatsAppQRSent: "Ich habe dir einen QR-Code geschickt: scanne ihn mit WhatsApp zum Koppeln.",
		CancelUsage: "Verwendung: /cancel <Aufgaben-ID>", CancelAmbiguous: "%s passt auf mehrere Aufgaben: gib mehr von der ID ein.",
		LanguageCurrent: "Aktuelle Sprache: %s. Verfügbar: %s.", PlanAnnounce: "Ich erledige das in %d Schritten:\n%s",
		StepDone: "✓ Schritt %d/%d: %s", StepFailed: "✗ Schritt %d/%d fehlgeschlagen: %s", PlanDone: "Fertig: %d von %d Schritten erledigt.",
		HeartbeatNext: "Nächster Check-in: %s\nAusgeblendete Abschnitte: %s", SelfHealGaveUp: "Die Selbstheilung hat nach %d Versuchen aufgegeben und braucht dich: %s\nVersucht wurde:\n%s",
	},
	Italian: {
		StatusReport: "Attivo da: %s\nFornitore: %s (%s)\nCanali: %s\nSandbox: %s\nArchivio: %s\nFatti: %d · Attività in sospeso: %d · Conversazioni: %d",
		UptimeReport: "Attivo da %s.", FactsList: "Cosa so di te:\n%s",
		MemoryReport: "Conversazioni: %d\nMessaggi: %d\nFatti: %d", TasksList: "Le tue attività in sospeso:\n%s",
		ProjectsList: "Progetti:\n%s", ProjectOn: "Progetto %s attivato.", ProjectOff: "Progetto disattivato.",
		ProjectUnknown: "Non esiste il progetto %s.", HeartbeatReport: "Intervallo dell'heartbeat: %d min.\nElenco:\n%s",
		LearningList: "Cosa ho imparato:\n%s", SkillsList: "Abilità:\n%s", NothingYet: "Ancora niente qui.",
		WhatsAppDisabled: "WhatsApp non è attivo.", WhatsAppQRSent: "Ti ho inviato un codice QR: scansionalo con WhatsApp per collegarlo.",
		CancelUsage: "Uso: /cancel <id attività>", CancelAmbiguous: "%s corrisponde a più attività: scrivi più caratteri dell'id.",
		LanguageCurrent: "Lingua attuale: %s. Disponibili: %s.", PlanAnnounce: "Lo farò in %d passaggi:\n%s",
		StepDone: "✓ Passaggio %d/%d: %s", StepFailed: "✗ Il passaggio %d/%d non è riuscito: %s", PlanDone: "Fatto: %d passaggi su %d completati.",
		HeartbeatNext: "Prossimo controllo: %s\nSezioni silenziate: %s", SelfHealGaveUp: "L'autoriparazione si è arresa dopo %d tentativi e ha bisogno di te: %s\nCosa è stato provato:\n%s",
	},
	Dutch: {
		StatusReport: "Actief: %s\nProvider: %s (%s)\nKanalen: %s\nSandbox: %s\nOpslag: %s\nFeiten: %d · Openstaande taken: %d · Gesprekken: %d",
		UptimeReport: "Actief sinds %s.", FactsList: "Wat ik over je weet:\n%s",
		MemoryReport: "Gesprekken: %d\nBerichten: %d\nFeiten: %d", TasksList: "Je openstaande taken:\n%s",
		ProjectsList: "Projecten:\n%s", ProjectOn: "Project %s geactiveerd.", ProjectOff: "Project gedeactiveerd.",
		ProjectUnknown: "Er is geen project %s.", HeartbeatReport: "Heartbeat-interval: %d min.\nLijst:\n%s",
		LearningList: "Wat ik geleerd heb:\n%s", SkillsList: "Vaardigheden:\n%s", NothingYet: "Nog niets hier.",
		WhatsAppDisabled: "WhatsApp is niet ingeschakeld.", WhatsAppQRSent: "Ik heb je een QR-code gestuurd: scan hem met WhatsApp om te koppelen.",
		CancelUsage: "Gebruik: /cancel <taak-id>", CancelAmbiguous: "%s past bij meerdere taken: typ meer van de id.",
		LanguageCurrent: "Huidige taal: %s. Beschikbaar: %s.", PlanAnnounce: "Ik doe dit in %d stappen:\n%s",
		StepDone: "✓ Stap %d/%d: %s", StepFailed: "✗ Stap %d/%d mislukt: %s", PlanDone: "Klaar: %d van %d stappen voltooid.",
		HeartbeatNext: "Volgende check-in: %s\nOnderdrukte secties: %s", SelfHealGaveUp: "Zelfherstel gaf het op na %d pogingen en heeft je nodig: %s\nWat is geprobeerd:\n%s",
	},
	Russian: {
		StatusReport: "Время работы: %s\nПровайдер: %s (%s)\nКаналы: %s\nПесочница: %s\nХранилище: %s\nФакты: %d · Ожидающие задачи: %d · Разговоры: %d",
		UptimeReport: "Работаю уже %s.", FactsList: "Что я о тебе знаю:\n%s",
		MemoryReport: "Разговоры: %d\nСообщения: %d\nФакты: %d", TasksList: "Твои ожидающие задачи:\n%s",
		ProjectsList: "Проекты:\n%s", ProjectOn: "Проект %s активирован.", ProjectOff: "Проект деактивирован.",
		ProjectUnknown: "Проекта %s нет.", HeartbeatReport: "Интервал heartbeat: %d мин.\nСписок:\n%s",
		LearningList: "Чему я научился:\n%s", SkillsList: "Навыки:\n%s", NothingYet: "Пока ничего нет.",
		WhatsAppDisabled: "WhatsApp не включён.", WhatsAppQRSent: "Я отправил QR-код: отсканируй его в WhatsApp для привязки.",
		CancelUsage: "Использование: /cancel <id задачи>", CancelAmbiguous: "%s подходит к нескольким задачам: введи больше символов id.",
		LanguageCurrent: "Текущий язык: %s. Доступны: %s.", PlanAnnounce: "Сделаю это за %d шагов:\n%s",
		StepDone: "✓ Шаг %d/%d: %s", StepFailed: "✗ Шаг %d/%d не удался: %s", PlanDone: "Готово: выполнено %d из %d шагов.",
		HeartbeatNext: "Следующая проверка: %s\nОтключённые разделы: %s", SelfHealGaveUp: "Самовосстановление сдалось после %d попыток и нуждается в вас: %s\nЧто пробовали:\n%s",
	},
}
