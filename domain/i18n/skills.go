package i18n

import "fmt"

// SkillKey names a text of the /skills answer.
type SkillKey int

// The /skills answer's texts.
const (
	SkillTriggers SkillKey = iota // %s trigger words
	SkillMCP                      // %s MCP server names
	SkillLessons                  // %s lessons, one per line
	SkillsNone                    // %s the skills folder
)

var skillTexts = map[string][4]string{
	English:    {"Triggers: %s", "MCP servers: %s", "Lessons:\n%s", "No skills yet. Add a folder with a SKILL.md to %s."},
	Spanish:    {"Activadores: %s", "Servidores MCP: %s", "Lecciones:\n%s", "Aún no hay habilidades. Añade una carpeta con un SKILL.md en %s."},
	Portuguese: {"Gatilhos: %s", "Servidores MCP: %s", "Lições:\n%s", "Ainda não há habilidades. Adicione uma pasta com um SKILL.md em %s."},
	French:     {"Déclencheurs : %s", "Serveurs MCP : %s", "Leçons :\n%s", "Aucune compétence pour l'instant. Ajoutez un dossier avec un SKILL.md dans %s."},
	German:     {"Auslöser: %s", "MCP-Server: %s", "Lektionen:\n%s", "Noch keine Fähigkeiten. Lege einen Ordner mit einer SKILL.md in %s an."},
	Italian:    {"Attivatori: %s", "Server MCP: %s", "Lezioni:\n%s", "Ancora nessuna abilità. Aggiungi una cartella con un SKILL.md in %s."},
	Dutch:      {"Triggers: %s", "MCP-servers: %s", "Lessen:\n%s", "Nog geen vaardigheden. Voeg een map met een SKILL.md toe aan %s."},
	Russian:    {"Триггеры: %s", "MCP-серверы: %s", "Уроки:\n%s", "Навыков пока нет. Добавьте папку с SKILL.md в %s."},
}

// Skill returns a text of the /skills answer in lang (English when lang
// lacks it), formatted with args.
func Skill(lang string, k SkillKey, args ...any) string {
	t, ok := skillTexts[OrDefault(lang)]
	if !ok {
		t = skillTexts[English]
	}
	return fmt.Sprintf(t[k], args...)
}
