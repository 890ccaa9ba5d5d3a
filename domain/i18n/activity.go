package i18n

import (
	"fmt"
	"strings"
)

// activityKind is what an agent's tool does, as a person would say it.
type activityKind int

const (
	actReading   activityKind = iota // %s: what is read
	actEditing                       // %s: the file changed
	actRunning                       // %s: the command
	actSearching                     // %s: the pattern or place
	actBrowsing                      // %s: the address or query
	actUsing                         // %s: the tool's name
	actWorking                       // no target
)

// activityTexts hold, per language, the line for each kind with a target
// and, after them, without one (the tool's kind alone).
var activityTexts = map[string][7][2]string{
	English: {{"Reading %s…", "Reading…"}, {"Editing %s…", "Editing files…"}, {"Running %s…", "Running a command…"},
		{"Searching %s…", "Searching…"}, {"Looking up %s…", "Looking it up…"}, {"Using %s…", "Using a tool…"}, {"Working…", "Working…"}},
	Spanish: {{"Leyendo %s…", "Leyendo…"}, {"Editando %s…", "Editando archivos…"}, {"Ejecutando %s…", "Ejecutando un comando…"},
		{"Buscando %s…", "Buscando…"}, {"Consultando %s…", "Consultando…"}, {"Usando %s…", "Usando una herramienta…"}, {"Trabajando…", "Trabajando…"}},
	Portuguese: {{"Lendo %s…", "Lendo…"}, {"Editando %s…", "Editando arquivos…"}, {"Executando %s…", "Executando um comando…"},
		{"Procurando %s…", "Procurando…"}, {"Consultando %s…", "Consultando…"}, {"Usando %s…", "Usando uma ferramenta…"}, {"Trabalhando…", "Trabalhando…"}},
	French: {{"Lecture de %s…", "Lecture…"}, {"Modification de %s…", "Modification de fichiers…"}, {"Exécution de %s…", "Exécution d'une commande…"},
		{"Recherche de %s…", "Recherche…"}, {"Consultation de %s…", "Consultation…"}, {"Utilisation de %s…", "Utilisation d'un outil…"}, {"Je travaille…", "Je travaille…"}},
	German: {{"Lese %s…", "Lese…"}, {"Bearbeite %s…", "Bearbeite Dateien…"}, {"Führe %s aus…", "Führe einen Befehl aus…"},
		{"Suche %s…", "Suche…"}, {"Schlage %s nach…", "Schlage nach…"}, {"Nutze %s…", "Nutze ein Werkzeug…"}, {"Arbeite…", "Arbeite…"}},
	Italian: {{"Leggo %s…", "Leggo…"}, {"Modifico %s…", "Modifico file…"}, {"Eseguo %s…", "Eseguo un comando…"},
		{"Cerco %s…", "Cerco…"}, {"Consulto %s…", "Consulto…"}, {"Uso %s…", "Uso uno strumento…"}, {"Sto lavorando…", "Sto lavorando…"}},
	Dutch: {{"%s lezen…", "Lezen…"}, {"%s bewerken…", "Bestanden bewerken…"}, {"%s uitvoeren…", "Een opdracht uitvoeren…"},
		{"Zoeken naar %s…", "Zoeken…"}, {"%s opzoeken…", "Opzoeken…"}, {"%s gebruiken…", "Een hulpmiddel gebruiken…"}, {"Bezig…", "Bezig…"}},
	Russian: {{"Читаю %s…", "Читаю…"}, {"Редактирую %s…", "Редактирую файлы…"}, {"Выполняю %s…", "Выполняю команду…"},
		{"Ищу %s…", "Ищу…"}, {"Смотрю %s…", "Смотрю…"}, {"Использую %s…", "Использую инструмент…"}, {"Работаю…", "Работаю…"}},
}

// toolKinds maps the agent's tool names to what they do; other tools are
// named as they are.
var toolKinds = map[string]activityKind{
	"Read": actReading, "NotebookRead": actReading,
	"Write": actEditing, "Edit": actEditing, "MultiEdit": actEditing, "NotebookEdit": actEditing,
	"Bash": actRunning, "BashOutput": actRunning,
	"Grep": actSearching, "Glob": actSearching, "LS": actSearching,
	"WebFetch": actBrowsing, "WebSearch": actBrowsing,
}

// Activity says in lang what an agent is doing while it uses tool on
// target ("Reading notes.md…"): the line a streamed reply shows before
// or between its text. Either may be empty.
func Activity(lang, tool, target string) string {
	texts, ok := activityTexts[OrDefault(lang)]
	if !ok {
		texts = activityTexts[English]
	}
	kind, known := toolKinds[tool]
	target = strings.TrimSpace(target)
	switch {
	case tool == "":
		kind = actWorking
	case !known:
		// An unknown tool (an MCP server's) is named rather than guessed.
		kind, target = actUsing, tool
	}
	if target == "" {
		return texts[kind][1]
	}
	return fmt.Sprintf(texts[kind][0], target)
}
