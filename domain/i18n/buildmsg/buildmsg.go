// Package buildmsg holds what a person is told as a build runs, in every
// language omega speaks.
package buildmsg

import (
	"fmt"

	"github.com/omega-gateway/omega/domain/i18n"
)

// Build progress phases: the messages a person gets as a build goes
// through the default topology's phases, in its order.
var buildPhases = []string{"analyst", "architect", "test-writer", "developer", "qa", "reviewer", "delivery"}

var buildPhaseTexts = map[string][7]string{
	i18n.English:    {"🔍 Analyzing your request…", "📐 Designing the architecture…", "🧪 Writing the tests…", "💻 Writing the code…", "✅ Checking it works…", "👀 Reviewing the code…", "📦 Packaging the result…"},
	i18n.Spanish:    {"🔍 Analizando tu petición…", "📐 Diseñando la arquitectura…", "🧪 Escribiendo las pruebas…", "💻 Escribiendo el código…", "✅ Comprobando que funciona…", "👀 Revisando el código…", "📦 Preparando el resultado…"},
	i18n.Portuguese: {"🔍 Analisando o seu pedido…", "📐 Desenhando a arquitetura…", "🧪 Escrevendo os testes…", "💻 Escrevendo o código…", "✅ Verificando se funciona…", "👀 Revisando o código…", "📦 Empacotando o resultado…"},
	i18n.French:     {"🔍 J'analyse votre demande…", "📐 Je conçois l'architecture…", "🧪 J'écris les tests…", "💻 J'écris le code…", "✅ Je vérifie que tout marche…", "👀 Je relis le code…", "📦 Je prépare le résultat…"},
	i18n.German:     {"🔍 Ich analysiere deine Anfrage…", "📐 Ich entwerfe die Architektur…", "🧪 Ich schreibe die Tests…", "💻 Ich schreibe den Code…", "✅ Ich prüfe, ob es funktioniert…", "👀 Ich prüfe den Code…", "📦 Ich verpacke das Ergebnis…"},
	i18n.Italian:    {"🔍 Analizzo la tua richiesta…", "📐 Progetto l'architettura…", "🧪 Scrivo i test…", "💻 Scrivo il codice…", "✅ Verifico che funzioni…", "👀 Rivedo il codice…", "📦 Preparo il risultato…"},
	i18n.Dutch:      {"🔍 Ik analyseer je verzoek…", "📐 Ik ontwerp de architectuur…", "🧪 Ik schrijf de tests…", "💻 Ik schrijf de code…", "✅ Ik controleer of het werkt…", "👀 Ik beoordeel de code…", "📦 Ik verpak het resultaat…"},
	i18n.Russian:    {"🔍 Анализирую запрос…", "📐 Проектирую архитектуру…", "🧪 Пишу тесты…", "💻 Пишу код…", "✅ Проверяю, что всё работает…", "👀 Проверяю код…", "📦 Упаковываю результат…"},
}

// Key names a build message other than a phase's.
type Key int

// The build messages.
const (
	PhaseOther Key = iota // %s phase name, %d phase number, %d of
	Starting              // %s build name, %d phases, %d most agent calls
	Done                  // %s build name, %s summary
	Failed                // %s build name, %s phase, %s reason
	Escalated             // %s build name, %s phase, %d cap
	Cancelled             // %s build name
	Confirm               // %s request
	Declined              //
)

var buildTexts = map[string][8]string{
	i18n.English: {"⚙️ Phase %[2]d of %[3]d: %[1]s…", "🏗️ Starting build %s: %d phases, at most %d agent calls.", "🎉 Build %s is done.\n\n%s",
		"❌ Build %s stopped in phase %s: %s", "⚠️ Build %s needs you: phase %s still fails after %d fixes. Look at its reports, then say /build resume or /build cancel.",
		"🛑 Build %s cancelled.", "Shall I build this? %s\nAnswer yes or no.", "OK, no build."},
	i18n.Spanish: {"⚙️ Fase %[2]d de %[3]d: %[1]s…", "🏗️ Empiezo la construcción %s: %d fases, como mucho %d llamadas a agentes.", "🎉 La construcción %s está lista.\n\n%s",
		"❌ La construcción %s se detuvo en la fase %s: %s", "⚠️ La construcción %s te necesita: la fase %s sigue fallando tras %d arreglos. Mira sus informes y di /build resume o /build cancel.",
		"🛑 Construcción %s cancelada.", "¿Lo construyo? %s\nResponde sí o no.", "Vale, no construyo nada."},
	i18n.Portuguese: {"⚙️ Fase %[2]d de %[3]d: %[1]s…", "🏗️ Começando a construção %s: %d fases, no máximo %d chamadas a agentes.", "🎉 A construção %s está pronta.\n\n%s",
		"❌ A construção %s parou na fase %s: %s", "⚠️ A construção %s precisa de você: a fase %s ainda falha após %d correções. Veja os relatórios e diga /build resume ou /build cancel.",
		"🛑 Construção %s cancelada.", "Posso construir isto? %s\nResponda sim ou não.", "Ok, nada de construção."},
	i18n.French: {"⚙️ Phase %[2]d sur %[3]d : %[1]s…", "🏗️ Je lance la construction %s : %d phases, au plus %d appels d'agents.", "🎉 La construction %s est terminée.\n\n%s",
		"❌ La construction %s s'est arrêtée à la phase %s : %s", "⚠️ La construction %s a besoin de vous : la phase %s échoue encore après %d corrections. Lisez ses rapports puis dites /build resume ou /build cancel.",
		"🛑 Construction %s annulée.", "Je construis ceci ? %s\nRépondez oui ou non.", "D'accord, pas de construction."},
	i18n.German: {"⚙️ Phase %[2]d von %[3]d: %[1]s…", "🏗️ Ich starte den Build %s: %d Phasen, höchstens %d Agentenaufrufe.", "🎉 Der Build %s ist fertig.\n\n%s",
		"❌ Der Build %s ist in Phase %s stehen geblieben: %s", "⚠️ Der Build %s braucht dich: Phase %s scheitert nach %d Korrekturen noch. Sieh dir die Berichte an und sag /build resume oder /build cancel.",
		"🛑 Build %s abgebrochen.", "Soll ich das bauen? %s\nAntworte ja oder nein.", "Gut, kein Build."},
	i18n.Italian: {"⚙️ Fase %[2]d di %[3]d: %[1]s…", "🏗️ Avvio la build %s: %d fasi, al massimo %d chiamate agli agenti.", "🎉 La build %s è pronta.\n\n%s",
		"❌ La build %s si è fermata nella fase %s: %s", "⚠️ La build %s ha bisogno di te: la fase %s fallisce ancora dopo %d correzioni. Guarda i report e di' /build resume o /build cancel.",
		"🛑 Build %s annullata.", "La costruisco? %s\nRispondi sì o no.", "Va bene, niente build."},
	i18n.Dutch: {"⚙️ Fase %[2]d van %[3]d: %[1]s…", "🏗️ Ik start build %s: %d fasen, hooguit %d agentaanroepen.", "🎉 Build %s is klaar.\n\n%s",
		"❌ Build %s is gestopt in fase %s: %s", "⚠️ Build %s heeft je nodig: fase %s faalt nog na %d correcties. Bekijk de rapporten en zeg /build resume of /build cancel.",
		"🛑 Build %s geannuleerd.", "Zal ik dit bouwen? %s\nAntwoord ja of nee.", "Oké, geen build."},
	i18n.Russian: {"⚙️ Этап %[2]d из %[3]d: %[1]s…", "🏗️ Начинаю сборку %s: %d этапов, не больше %d вызовов агентов.", "🎉 Сборка %s готова.\n\n%s",
		"❌ Сборка %s остановилась на этапе %s: %s", "⚠️ Сборке %s нужна ваша помощь: этап %s не проходит после %d исправлений. Посмотрите отчёты и скажите /build resume или /build cancel.",
		"🛑 Сборка %s отменена.", "Собрать это? %s\nОтветьте да или нет.", "Хорошо, без сборки."},
}

// Phase is the progress message of phase (0-based i of n) in lang:
// the known phases of the default topology have their own, any other
// phase a generic one.
func Phase(lang, phase string, i, n int) string {
	l := i18n.OrDefault(lang)
	for k, name := range buildPhases {
		if name == phase {
			t, ok := buildPhaseTexts[l]
			if !ok {
				t = buildPhaseTexts[i18n.English]
			}
			return t[k]
		}
	}
	return Text(lang, PhaseOther, phase, i+1, n)
}

// Text returns a build message in lang (English when lang lacks it).
func Text(lang string, k Key, args ...any) string {
	t, ok := buildTexts[i18n.OrDefault(lang)]
	if !ok {
		t = buildTexts[i18n.English]
	}
	return fmt.Sprintf(t[k], args...)
}
