package i18n

// catalogue holds every text in every language. A test checks that each
// language has every key with the same placeholders as English.
var catalogue = map[string]map[Key]string{
	English: {
		StatusFirstNudge:      "This is taking a moment...",
		StatusStillWorking:    "Still working on it...",
		BusyAck:               "Got it, I'll get to this next.",
		AccessDenied:          "Sorry, I can only talk with people my owner has allowed.",
		ProviderUnavailable:   "I can't reach my AI provider right now: the owner needs to check its configuration (API key, login or network). Your message is saved.",
		ErrRateLimited:        "I'm being rate-limited by my AI provider. Please try again in a minute.",
		ErrAuth:               "My AI provider rejected my credentials. The owner needs to check the API key or login.",
		ErrServer:             "My AI provider is having trouble right now. Please try again in a few minutes.",
		ErrTimeout:            "I took too long to respond. Please try again, or break the request into smaller steps.",
		ErrBadRequest:         "My AI provider couldn't process that request. Try rephrasing it or making it shorter.",
		ErrMalformed:          "I got an unreadable answer from my AI provider. Please try again.",
		ErrUnknown:            "Something went wrong. Please try again.",
		AttachmentReceived:    "Got your file: %s",
		AttachmentUnsupported: "I can't handle this kind of attachment yet (%s).",
		AttachmentTooLarge:    "That file is too large. The limit is %s.",
		VoiceNotConfigured:    "I received a voice message, but voice transcription isn't set up. Please send it as text.",
		Help: "Commands:\n" +
			"/help — this list\n" +
			"/status — uptime, provider and memory\n" +
			"/uptime — how long I've been running\n" +
			"/usage — what I've spent on AI calls today and this month, and what's left\n" +
			"/forget — clear the current conversation\n" +
			"/facts — what I know about you\n" +
			"/memory — memory statistics\n" +
			"/search WORDS — find something in our earlier conversations\n" +
			"/tasks — your pending tasks\n" +
			"/cancel <id> — cancel a task\n" +
			"/language <name> — change my language\n" +
			"/personality <style> — change how I talk (reset to undo)\n" +
			"/purge — delete all facts about you\n" +
			"/projects — list projects\n" +
			"/project <name|off> — activate or leave a project\n" +
			"/heartbeat — heartbeat status and checklist\n" +
			"/learning — lessons and outcomes I've learned\n" +
			"/skills — installed skills\n" +
			"/build <…> — build a piece of software with agents (list, cancel, resume)\n" +
			"/whatsapp — pair WhatsApp",
		UnknownCommand:      "I don't know the command %s.",
		TaskScheduled:       "✓ Reminder scheduled: %s — %s",
		ActionScheduled:     "✓ Action scheduled: %s — %s",
		TaskCancelled:       "✓ Cancelled: %s",
		TaskUpdated:         "✓ Updated: %s",
		TaskSimilarExists:   "⚠ A similar task already exists: %s",
		TaskNotFound:        "No pending task matches %s.",
		Reminder:            "⏰ Reminder: %s",
		NoTasks:             "You have no pending tasks.",
		LanguageSwitched:    "Language switched to %s.",
		LanguageUnsupported: "I don't speak %s yet. Available: %s.",
		PersonalitySet:      "Got it, from now on: %s",
		PersonalityReset:    "Personality reset to default.",
		FactsPurged:         "All facts about you have been deleted.",
		NoFacts:             "I don't know any facts about you yet.",
		ConversationCleared: "Conversation cleared. Let's start fresh.",
		HeartbeatInterval:   "Heartbeat interval set to %d min.",
	},
	Spanish: {
		StatusFirstNudge:      "Esto está tardando un poco...",
		StatusStillWorking:    "Sigo trabajando en ello...",
		BusyAck:               "Recibido, me ocupo de esto a continuación.",
		AccessDenied:          "Lo siento, solo puedo hablar con las personas que mi dueño ha autorizado.",
		ProviderUnavailable:   "Ahora mismo no puedo conectar con mi proveedor de IA: el dueño tiene que revisar su configuración (clave API, inicio de sesión o red). Tu mensaje está guardado.",
		ErrRateLimited:        "Mi proveedor de IA me está limitando las peticiones. Inténtalo de nuevo en un minuto.",
		ErrAuth:               "Mi proveedor de IA rechazó mis credenciales. El dueño tiene que revisar la clave API o el inicio de sesión.",
		ErrServer:             "Mi proveedor de IA tiene problemas ahora mismo. Inténtalo de nuevo en unos minutos.",
		ErrTimeout:            "Tardé demasiado en responder. Inténtalo de nuevo o divide la petición en pasos más pequeños.",
		ErrBadRequest:         "Mi proveedor de IA no pudo procesar esa petición. Prueba a reformularla o acortarla.",
		ErrMalformed:          "Recibí una respuesta ilegible de mi proveedor de IA. Inténtalo de nuevo.",
		ErrUnknown:            "Algo salió mal. Inténtalo de nuevo.",
		AttachmentReceived:    "Recibí tu archivo: %s",
		AttachmentUnsupported: "Todavía no puedo procesar este tipo de adjunto (%s).",
		AttachmentTooLarge:    "Ese archivo es demasiado grande. El límite es %s.",
		VoiceNotConfigured:    "Recibí un mensaje de voz, pero la transcripción no está configurada. Envíamelo como texto, por favor.",
		Help: "Comandos:\n" +
			"/help — esta lista\n" +
			"/status — tiempo activo, proveedor y memoria\n" +
			"/uptime — cuánto tiempo llevo en marcha\n" +
			"/usage — lo que he gastado en llamadas a la IA hoy y este mes, y lo que queda\n" +
			"/forget — borrar la conversación actual\n" +
			"/facts — lo que sé de ti\n" +
			"/memory — estadísticas de memoria\n" +
			"/search PALABRAS — buscar en nuestras conversaciones anteriores\n" +
			"/tasks — tus tareas pendientes\n" +
			"/cancel <id> — cancelar una tarea\n" +
			"/language <nombre> — cambiar mi idioma\n" +
			"/personality <estilo> — cambiar cómo hablo (reset para deshacer)\n" +
			"/purge — borrar todos tus datos\n" +
			"/projects — listar proyectos\n" +
			"/project <nombre|off> — activar o salir de un proyecto\n" +
			"/heartbeat — estado y lista del heartbeat\n" +
			"/learning — lecciones y resultados aprendidos\n" +
			"/skills — habilidades instaladas\n" +
			"/build <…> — construir un programa con agentes (list, cancel, resume)\n" +
			"/whatsapp — vincular WhatsApp",
		UnknownCommand:      "No conozco el comando %s.",
		TaskScheduled:       "✓ Recordatorio programado: %s — %s",
		ActionScheduled:     "✓ Acción programada: %s — %s",
		TaskCancelled:       "✓ Cancelada: %s",
		TaskUpdated:         "✓ Actualizada: %s",
		TaskSimilarExists:   "⚠ Ya existe una tarea parecida: %s",
		TaskNotFound:        "Ninguna tarea pendiente coincide con %s.",
		Reminder:            "⏰ Recordatorio: %s",
		NoTasks:             "No tienes tareas pendientes.",
		LanguageSwitched:    "Idioma cambiado a %s.",
		LanguageUnsupported: "Todavía no hablo %s. Disponibles: %s.",
		PersonalitySet:      "Entendido, a partir de ahora: %s",
		PersonalityReset:    "Personalidad restablecida.",
		FactsPurged:         "He borrado todo lo que sabía de ti.",
		NoFacts:             "Todavía no sé nada de ti.",
		ConversationCleared: "Conversación borrada. Empecemos de nuevo.",
		HeartbeatInterval:   "Intervalo del heartbeat: %d min.",
	},
	Portuguese: {
		StatusFirstNudge:      "Isto está demorando um pouco...",
		StatusStillWorking:    "Ainda estou trabalhando nisso...",
		BusyAck:               "Recebido, cuido disso em seguida.",
		AccessDenied:          "Desculpe, só posso conversar com pessoas autorizadas pelo meu dono.",
		ProviderUnavailable:   "Não consigo acessar meu provedor de IA agora: o dono precisa verificar a configuração (chave de API, login ou rede). Sua mensagem está guardada.",
		ErrRateLimited:        "Meu provedor de IA está limitando as requisições. Tente de novo em um minuto.",
		ErrAuth:               "Meu provedor de IA recusou minhas credenciais. O dono precisa verificar a chave de API ou o login.",
		ErrServer:             "Meu provedor de IA está com problemas agora. Tente de novo em alguns minutos.",
		ErrTimeout:            "Demorei demais para responder. Tente de novo ou divida o pedido em etapas menores.",
		ErrBadRequest:         "Meu provedor de IA não conseguiu processar esse pedido. Tente reformular ou encurtar.",
		ErrMalformed:          "Recebi uma resposta ilegível do meu provedor de IA. Tente de novo.",
		ErrUnknown:            "Algo deu errado. Tente de novo.",
		AttachmentReceived:    "Recebi seu arquivo: %s",
		AttachmentUnsupported: "Ainda não consigo lidar com este tipo de anexo (%s).",
		AttachmentTooLarge:    "Esse arquivo é grande demais. O limite é %s.",
		VoiceNotConfigured:    "Recebi uma mensagem de voz, mas a transcrição não está configurada. Envie como texto, por favor.",
		Help: "Comandos:\n" +
			"/help — esta lista\n" +
			"/status — tempo ativo, provedor e memória\n" +
			"/uptime — há quanto tempo estou rodando\n" +
			"/usage — quanto gastei em chamadas à IA hoje e neste mês, e quanto resta\n" +
			"/forget — limpar a conversa atual\n" +
			"/facts — o que sei sobre você\n" +
			"/memory — estatísticas da memória\n" +
			"/search PALAVRAS — procurar nas nossas conversas anteriores\n" +
			"/tasks — suas tarefas pendentes\n" +
			"/cancel <id> — cancelar uma tarefa\n" +
			"/language <nome> — mudar meu idioma\n" +
			"/personality <estilo> — mudar meu jeito de falar (reset para desfazer)\n" +
			"/purge — apagar todos os seus dados\n" +
			"/projects — listar projetos\n" +
			"/project <nome|off> — ativar ou sair de um projeto\n" +
			"/heartbeat — estado e lista do heartbeat\n" +
			"/learning — lições e resultados aprendidos\n" +
			"/skills — habilidades instaladas\n" +
			"/build <…> — construir um programa com agentes (list, cancel, resume)\n" +
			"/whatsapp — conectar o WhatsApp",
		UnknownCommand:      "Não conheço o comando %s.",
		TaskScheduled:       "✓ Lembrete agendado: %s — %s",
		ActionScheduled:     "✓ Ação agendada: %s — %s",
		TaskCancelled:       "✓ Cancelada: %s",
		TaskUpdated:         "✓ Atualizada: %s",
		TaskSimilarExists:   "⚠ Já existe uma tarefa parecida: %s",
		TaskNotFound:        "Nenhuma tarefa pendente corresponde a %s.",
		Reminder:            "⏰ Lembrete: %s",
		NoTasks:             "Você não tem tarefas pendentes.",
		LanguageSwitched:    "Idioma alterado para %s.",
		LanguageUnsupported: "Ainda não falo %s. Disponíveis: %s.",
		PersonalitySet:      "Entendido, a partir de agora: %s",
		PersonalityReset:    "Personalidade restaurada ao padrão.",
		FactsPurged:         "Apaguei tudo o que sabia sobre você.",
		NoFacts:             "Ainda não sei nada sobre você.",
		ConversationCleared: "Conversa apagada. Vamos recomeçar.",
		HeartbeatInterval:   "Intervalo do heartbeat: %d min.",
	},
	French: {
		StatusFirstNudge:      "Ça prend un peu de temps...",
		StatusStillWorking:    "Je suis toujours dessus...",
		BusyAck:               "Bien reçu, je m'en occupe juste après.",
		AccessDenied:          "Désolé, je ne peux parler qu'aux personnes autorisées par mon propriétaire.",
		ProviderUnavailable:   "Je n'arrive pas à joindre mon fournisseur d'IA : le propriétaire doit vérifier sa configuration (clé API, connexion ou réseau). Ton message est conservé.",
		ErrRateLimited:        "Mon fournisseur d'IA limite mes requêtes. Réessaie dans une minute.",
		ErrAuth:               "Mon fournisseur d'IA a refusé mes identifiants. Le propriétaire doit vérifier la clé API ou la connexion.",
		ErrServer:             "Mon fournisseur d'IA a des problèmes en ce moment. Réessaie dans quelques minutes.",
		ErrTimeout:            "J'ai mis trop de temps à répondre. Réessaie, ou découpe la demande en étapes plus petites.",
		ErrBadRequest:         "Mon fournisseur d'IA n'a pas pu traiter cette demande. Essaie de la reformuler ou de la raccourcir.",
		ErrMalformed:          "J'ai reçu une réponse illisible de mon fournisseur d'IA. Réessaie.",
		ErrUnknown:            "Un problème est survenu. Réessaie.",
		AttachmentReceived:    "J'ai bien reçu ton fichier : %s",
		AttachmentUnsupported: "Je ne sais pas encore traiter ce type de pièce jointe (%s).",
		AttachmentTooLarge:    "Ce fichier est trop volumineux. La limite est de %s.",
		VoiceNotConfigured:    "J'ai reçu un message vocal, mais la transcription n'est pas configurée. Envoie-le en texte, s'il te plaît.",
		Help: "Commandes :\n" +
			"/help — cette liste\n" +
			"/status — disponibilité, fournisseur et mémoire\n" +
			"/uptime — depuis combien de temps je tourne\n" +
			"/usage — ce que j'ai dépensé en appels à l'IA aujourd'hui et ce mois-ci, et ce qui reste\n" +
			"/forget — effacer la conversation en cours\n" +
			"/facts — ce que je sais de toi\n" +
			"/memory — statistiques de la mémoire\n" +
			"/search MOTS — chercher dans nos conversations précédentes\n" +
			"/tasks — tes tâches en attente\n" +
			"/cancel <id> — annuler une tâche\n" +
			"/language <nom> — changer ma langue\n" +
			"/personality <style> — changer ma façon de parler (reset pour annuler)\n" +
			"/purge — effacer toutes tes données\n" +
			"/projects — lister les projets\n" +
			"/project <nom|off> — activer ou quitter un projet\n" +
			"/heartbeat — état et liste du heartbeat\n" +
			"/learning — leçons et résultats appris\n" +
			"/skills — compétences installées\n" +
			"/build <…> — construire un logiciel avec des agents (list, cancel, resume)\n" +
			"/whatsapp — associer WhatsApp",
		UnknownCommand:      "Je ne connais pas la commande %s.",
		TaskScheduled:       "✓ Rappel programmé : %s — %s",
		ActionScheduled:     "✓ Action programmée : %s — %s",
		TaskCancelled:       "✓ Annulée : %s",
		TaskUpdated:         "✓ Mise à jour : %s",
		TaskSimilarExists:   "⚠ Une tâche similaire existe déjà : %s",
		TaskNotFound:        "Aucune tâche en attente ne correspond à %s.",
		Reminder:            "⏰ Rappel : %s",
		NoTasks:             "Tu n'as aucune tâche en attente.",
		LanguageSwitched:    "Langue changée : %s.",
		LanguageUnsupported: "Je ne parle pas encore %s. Disponibles : %s.",
		PersonalitySet:      "Compris, désormais : %s",
		PersonalityReset:    "Personnalité réinitialisée.",
		FactsPurged:         "J'ai effacé tout ce que je savais de toi.",
		NoFacts:             "Je ne sais encore rien de toi.",
		ConversationCleared: "Conversation effacée. On repart de zéro.",
		HeartbeatInterval:   "Intervalle du heartbeat : %d min.",
	},
	German: {
		StatusFirstNudge:      "Das dauert einen Moment...",
		StatusStillWorking:    "Ich arbeite noch daran...",
		BusyAck:               "Verstanden, das kommt als Nächstes dran.",
		AccessDenied:          "Entschuldigung, ich darf nur mit Personen sprechen, die mein Besitzer freigegeben hat.",
		ProviderUnavailable:   "Ich erreiche meinen KI-Anbieter gerade nicht: Der Besitzer muss die Konfiguration prüfen (API-Schlüssel, Anmeldung oder Netzwerk). Deine Nachricht ist gespeichert.",
		ErrRateLimited:        "Mein KI-Anbieter drosselt gerade meine Anfragen. Bitte versuch es in einer Minute noch einmal.",
		ErrAuth:               "Mein KI-Anbieter hat meine Zugangsdaten abgelehnt. Der Besitzer muss den API-Schlüssel oder die Anmeldung prüfen.",
		ErrServer:             "Mein KI-Anbieter hat gerade Probleme. Bitte versuch es in ein paar Minuten noch einmal.",
		ErrTimeout:            "Ich habe zu lange gebraucht. Bitte versuch es noch einmal oder teile die Anfrage in kleinere Schritte auf.",
		ErrBadRequest:         "Mein KI-Anbieter konnte diese Anfrage nicht verarbeiten. Formuliere sie bitte anders oder kürzer.",
		ErrMalformed:          "Ich habe eine unlesbare Antwort von meinem KI-Anbieter bekommen. Bitte versuch es noch einmal.",
		ErrUnknown:            "Etwas ist schiefgelaufen. Bitte versuch es noch einmal.",
		AttachmentReceived:    "Deine Datei ist angekommen: %s",
		AttachmentUnsupported: "Mit dieser Art von Anhang kann ich noch nichts anfangen (%s).",
		AttachmentTooLarge:    "Die Datei ist zu groß. Das Limit ist %s.",
		VoiceNotConfigured:    "Ich habe eine Sprachnachricht bekommen, aber die Transkription ist nicht eingerichtet. Bitte schick sie als Text.",
		Help: "Befehle:\n" +
			"/help — diese Liste\n" +
			"/status — Laufzeit, Anbieter und Speicher\n" +
			"/uptime — wie lange ich schon laufe\n" +
			"/usage — was ich heute und diesen Monat für KI-Aufrufe ausgegeben habe und was übrig ist\n" +
			"/forget — aktuelles Gespräch löschen\n" +
			"/facts — was ich über dich weiß\n" +
			"/memory — Speicherstatistik\n" +
			"/search WÖRTER — in unseren früheren Gesprächen suchen\n" +
			"/tasks — deine offenen Aufgaben\n" +
			"/cancel <id> — eine Aufgabe abbrechen\n" +
			"/language <Name> — meine Sprache ändern\n" +
			"/personality <Stil> — meinen Ton ändern (reset zum Zurücksetzen)\n" +
			"/purge — alle Daten über dich löschen\n" +
			"/projects — Projekte auflisten\n" +
			"/project <Name|off> — Projekt aktivieren oder verlassen\n" +
			"/heartbeat — Heartbeat-Status und Checkliste\n" +
			"/learning — gelernte Lektionen und Ergebnisse\n" +
			"/skills — installierte Skills\n" +
			"/build <…> — Software mit Agenten bauen (list, cancel, resume)\n" +
			"/whatsapp — WhatsApp verbinden",
		UnknownCommand:      "Den Befehl %s kenne ich nicht.",
		TaskScheduled:       "✓ Erinnerung geplant: %s — %s",
		ActionScheduled:     "✓ Aktion geplant: %s — %s",
		TaskCancelled:       "✓ Abgebrochen: %s",
		TaskUpdated:         "✓ Aktualisiert: %s",
		TaskSimilarExists:   "⚠ Eine ähnliche Aufgabe gibt es schon: %s",
		TaskNotFound:        "Keine offene Aufgabe passt zu %s.",
		Reminder:            "⏰ Erinnerung: %s",
		NoTasks:             "Du hast keine offenen Aufgaben.",
		LanguageSwitched:    "Sprache geändert auf %s.",
		LanguageUnsupported: "%s spreche ich noch nicht. Verfügbar: %s.",
		PersonalitySet:      "Alles klar, ab jetzt: %s",
		PersonalityReset:    "Persönlichkeit zurückgesetzt.",
		FactsPurged:         "Ich habe alles gelöscht, was ich über dich wusste.",
		NoFacts:             "Ich weiß noch nichts über dich.",
		ConversationCleared: "Gespräch gelöscht. Fangen wir neu an.",
		HeartbeatInterval:   "Heartbeat-Intervall: %d Min.",
	},
	Italian: {
		StatusFirstNudge:      "Ci sto mettendo un momento...",
		StatusStillWorking:    "Ci sto ancora lavorando...",
		BusyAck:               "Ricevuto, me ne occupo subito dopo.",
		AccessDenied:          "Mi dispiace, posso parlare solo con le persone autorizzate dal mio proprietario.",
		ProviderUnavailable:   "Non riesco a raggiungere il mio fornitore di IA: il proprietario deve controllarne la configurazione (chiave API, accesso o rete). Il tuo messaggio è salvato.",
		ErrRateLimited:        "Il mio fornitore di IA sta limitando le richieste. Riprova tra un minuto.",
		ErrAuth:               "Il mio fornitore di IA ha rifiutato le mie credenziali. Il proprietario deve controllare la chiave API o l'accesso.",
		ErrServer:             "Il mio fornitore di IA ha dei problemi in questo momento. Riprova tra qualche minuto.",
		ErrTimeout:            "Ci ho messo troppo a rispondere. Riprova, oppure dividi la richiesta in passi più piccoli.",
		ErrBadRequest:         "Il mio fornitore di IA non è riuscito a elaborare la richiesta. Prova a riformularla o ad accorciarla.",
		ErrMalformed:          "Ho ricevuto una risposta illeggibile dal mio fornitore di IA. Riprova.",
		ErrUnknown:            "Qualcosa è andato storto. Riprova.",
		AttachmentReceived:    "Ho ricevuto il tuo file: %s",
		AttachmentUnsupported: "Non so ancora gestire questo tipo di allegato (%s).",
		AttachmentTooLarge:    "Il file è troppo grande. Il limite è %s.",
		VoiceNotConfigured:    "Ho ricevuto un messaggio vocale, ma la trascrizione non è configurata. Mandamelo come testo, per favore.",
		Help: "Comandi:\n" +
			"/help — questo elenco\n" +
			"/status — tempo attivo, fornitore e memoria\n" +
			"/uptime — da quanto sono in funzione\n" +
			"/usage — quanto ho speso in chiamate all'IA oggi e questo mese, e quanto resta\n" +
			"/forget — cancella la conversazione attuale\n" +
			"/facts — cosa so di te\n" +
			"/memory — statistiche della memoria\n" +
			"/search PAROLE — cercare nelle nostre conversazioni precedenti\n" +
			"/tasks — le tue attività in sospeso\n" +
			"/cancel <id> — annulla un'attività\n" +
			"/language <nome> — cambia la mia lingua\n" +
			"/personality <stile> — cambia il mio modo di parlare (reset per annullare)\n" +
			"/purge — cancella tutti i tuoi dati\n" +
			"/projects — elenca i progetti\n" +
			"/project <nome|off> — attiva o esci da un progetto\n" +
			"/heartbeat — stato e lista dell'heartbeat\n" +
			"/learning — lezioni e risultati appresi\n" +
			"/skills — skill installate\n" +
			"/build <…> — costruire un software con agenti (list, cancel, resume)\n" +
			"/whatsapp — collega WhatsApp",
		UnknownCommand:      "Non conosco il comando %s.",
		TaskScheduled:       "✓ Promemoria programmato: %s — %s",
		ActionScheduled:     "✓ Azione programmata: %s — %s",
		TaskCancelled:       "✓ Annullata: %s",
		TaskUpdated:         "✓ Aggiornata: %s",
		TaskSimilarExists:   "⚠ Esiste già un'attività simile: %s",
		TaskNotFound:        "Nessuna attività in sospeso corrisponde a %s.",
		Reminder:            "⏰ Promemoria: %s",
		NoTasks:             "Non hai attività in sospeso.",
		LanguageSwitched:    "Lingua cambiata in %s.",
		LanguageUnsupported: "Non parlo ancora %s. Disponibili: %s.",
		PersonalitySet:      "Capito, da ora in poi: %s",
		PersonalityReset:    "Personalità ripristinata.",
		FactsPurged:         "Ho cancellato tutto quello che sapevo di te.",
		NoFacts:             "Non so ancora niente di te.",
		ConversationCleared: "Conversazione cancellata. Ricominciamo da capo.",
		HeartbeatInterval:   "Intervallo dell'heartbeat: %d min.",
	},
	Dutch: {
		StatusFirstNudge:      "Dit duurt even...",
		StatusStillWorking:    "Ik ben er nog mee bezig...",
		BusyAck:               "Begrepen, dit pak ik hierna op.",
		AccessDenied:          "Sorry, ik mag alleen praten met mensen die mijn eigenaar heeft toegestaan.",
		ProviderUnavailable:   "Ik kan mijn AI-provider nu niet bereiken: de eigenaar moet de configuratie controleren (API-sleutel, login of netwerk). Je bericht is bewaard.",
		ErrRateLimited:        "Mijn AI-provider beperkt mijn verzoeken. Probeer het over een minuut opnieuw.",
		ErrAuth:               "Mijn AI-provider heeft mijn inloggegevens geweigerd. De eigenaar moet de API-sleutel of login controleren.",
		ErrServer:             "Mijn AI-provider heeft nu problemen. Probeer het over een paar minuten opnieuw.",
		ErrTimeout:            "Ik deed er te lang over. Probeer het opnieuw, of splits het verzoek op in kleinere stappen.",
		ErrBadRequest:         "Mijn AI-provider kon dat verzoek niet verwerken. Probeer het anders of korter te formuleren.",
		ErrMalformed:          "Ik kreeg een onleesbaar antwoord van mijn AI-provider. Probeer het opnieuw.",
		ErrUnknown:            "Er ging iets mis. Probeer het opnieuw.",
		AttachmentReceived:    "Je bestand is binnen: %s",
		AttachmentUnsupported: "Met dit soort bijlage kan ik nog niets (%s).",
		AttachmentTooLarge:    "Dat bestand is te groot. De limiet is %s.",
		VoiceNotConfigured:    "Ik kreeg een spraakbericht, maar transcriptie is niet ingesteld. Stuur het alsjeblieft als tekst.",
		Help: "Commando's:\n" +
			"/help — deze lijst\n" +
			"/status — uptime, provider en geheugen\n" +
			"/uptime — hoe lang ik al draai\n" +
			"/usage — wat ik vandaag en deze maand aan AI-aanroepen heb uitgegeven, en wat er over is\n" +
			"/forget — huidige gesprek wissen\n" +
			"/facts — wat ik over je weet\n" +
			"/memory — geheugenstatistieken\n" +
			"/search WOORDEN — zoeken in onze eerdere gesprekken\n" +
			"/tasks — je openstaande taken\n" +
			"/cancel <id> — een taak annuleren\n" +
			"/language <naam> — mijn taal wijzigen\n" +
			"/personality <stijl> — mijn toon wijzigen (reset om terug te zetten)\n" +
			"/purge — al je gegevens wissen\n" +
			"/projects — projecten tonen\n" +
			"/project <naam|off> — project activeren of verlaten\n" +
			"/heartbeat — heartbeat-status en checklist\n" +
			"/learning — geleerde lessen en resultaten\n" +
			"/skills — geïnstalleerde skills\n" +
			"/build <…> — software bouwen met agenten (list, cancel, resume)\n" +
			"/whatsapp — WhatsApp koppelen",
		UnknownCommand:      "Het commando %s ken ik niet.",
		TaskScheduled:       "✓ Herinnering gepland: %s — %s",
		ActionScheduled:     "✓ Actie gepland: %s — %s",
		TaskCancelled:       "✓ Geannuleerd: %s",
		TaskUpdated:         "✓ Bijgewerkt: %s",
		TaskSimilarExists:   "⚠ Er bestaat al een vergelijkbare taak: %s",
		TaskNotFound:        "Geen openstaande taak komt overeen met %s.",
		Reminder:            "⏰ Herinnering: %s",
		NoTasks:             "Je hebt geen openstaande taken.",
		LanguageSwitched:    "Taal gewijzigd naar %s.",
		LanguageUnsupported: "Ik spreek nog geen %s. Beschikbaar: %s.",
		PersonalitySet:      "Begrepen, vanaf nu: %s",
		PersonalityReset:    "Persoonlijkheid teruggezet.",
		FactsPurged:         "Ik heb alles gewist wat ik over je wist.",
		NoFacts:             "Ik weet nog niets over je.",
		ConversationCleared: "Gesprek gewist. We beginnen opnieuw.",
		HeartbeatInterval:   "Heartbeat-interval: %d min.",
	},
	Russian: {
		StatusFirstNudge:      "Это займёт немного времени...",
		StatusStillWorking:    "Всё ещё работаю над этим...",
		BusyAck:               "Принято, займусь этим следующим.",
		AccessDenied:          "Извините, я могу общаться только с теми, кого разрешил мой владелец.",
		ProviderUnavailable:   "Сейчас я не могу связаться со своим ИИ-провайдером: владельцу нужно проверить настройки (API-ключ, вход или сеть). Ваше сообщение сохранено.",
		ErrRateLimited:        "ИИ-провайдер ограничивает мои запросы. Попробуйте ещё раз через минуту.",
		ErrAuth:               "ИИ-провайдер отклонил мои учётные данные. Владельцу нужно проверить API-ключ или вход.",
		ErrServer:             "У моего ИИ-провайдера сейчас проблемы. Попробуйте через несколько минут.",
		ErrTimeout:            "Я слишком долго отвечал. Попробуйте ещё раз или разбейте запрос на шаги поменьше.",
		ErrBadRequest:         "ИИ-провайдер не смог обработать этот запрос. Попробуйте переформулировать или сократить его.",
		ErrMalformed:          "Я получил нечитаемый ответ от ИИ-провайдера. Попробуйте ещё раз.",
		ErrUnknown:            "Что-то пошло не так. Попробуйте ещё раз.",
		AttachmentReceived:    "Файл получен: %s",
		AttachmentUnsupported: "Я пока не умею работать с такими вложениями (%s).",
		AttachmentTooLarge:    "Файл слишком большой. Ограничение — %s.",
		VoiceNotConfigured:    "Я получил голосовое сообщение, но распознавание речи не настроено. Пожалуйста, отправьте текстом.",
		Help: "Команды:\n" +
			"/help — этот список\n" +
			"/status — время работы, провайдер и память\n" +
			"/uptime — сколько я уже работаю\n" +
			"/usage — сколько я потратил на вызовы ИИ сегодня и в этом месяце и сколько осталось\n" +
			"/forget — очистить текущий разговор\n" +
			"/facts — что я о вас знаю\n" +
			"/memory — статистика памяти\n" +
			"/search СЛОВА — искать в наших прошлых разговорах\n" +
			"/tasks — ваши ожидающие задачи\n" +
			"/cancel <id> — отменить задачу\n" +
			"/language <язык> — сменить язык\n" +
			"/personality <стиль> — изменить мою манеру общения (reset — сбросить)\n" +
			"/purge — удалить все данные о вас\n" +
			"/projects — список проектов\n" +
			"/project <имя|off> — включить проект или выйти из него\n" +
			"/heartbeat — состояние и список heartbeat\n" +
			"/learning — усвоенные уроки и результаты\n" +
			"/skills — установленные навыки\n" +
			"/build <…> — собрать программу агентами (list, cancel, resume)\n" +
			"/whatsapp — подключить WhatsApp",
		UnknownCommand:      "Я не знаю команду %s.",
		TaskScheduled:       "✓ Напоминание запланировано: %s — %s",
		ActionScheduled:     "✓ Действие запланировано: %s — %s",
		TaskCancelled:       "✓ Отменено: %s",
		TaskUpdated:         "✓ Обновлено: %s",
		TaskSimilarExists:   "⚠ Похожая задача уже есть: %s",
		TaskNotFound:        "Нет ожидающей задачи, подходящей под %s.",
		Reminder:            "⏰ Напоминание: %s",
		NoTasks:             "У вас нет ожидающих задач.",
		LanguageSwitched:    "Язык изменён: %s.",
		LanguageUnsupported: "Я пока не говорю на языке %s. Доступны: %s.",
		PersonalitySet:      "Понял, теперь так: %s",
		PersonalityReset:    "Манера общения сброшена.",
		FactsPurged:         "Я удалил всё, что знал о вас.",
		NoFacts:             "Я пока ничего о вас не знаю.",
		ConversationCleared: "Разговор очищен. Начнём сначала.",
		HeartbeatInterval:   "Интервал heartbeat: %d мин.",
	},
}
