package i18n

// PairingKey names a text of the WhatsApp pairing flow.
type PairingKey int

// The pairing flow's texts.
const (
	PairingScan PairingKey = iota
	PairingPaired
	PairingTimeout
	PairingFailed
)

var pairingTexts = map[string][4]string{
	English: {
		"Scan this code with WhatsApp: Settings → Linked devices → Link a device. A new code follows if it expires.",
		"WhatsApp is linked. I will now answer your WhatsApp messages too.",
		"The WhatsApp pairing timed out. Send /whatsapp to get a new code.",
		"WhatsApp pairing failed. Send /whatsapp to try again.",
	},
	Spanish: {
		"Escanea este código con WhatsApp: Ajustes → Dispositivos vinculados → Vincular un dispositivo. Si caduca, llegará uno nuevo.",
		"WhatsApp está vinculado. Ahora también responderé a tus mensajes de WhatsApp.",
		"La vinculación de WhatsApp caducó. Envía /whatsapp para obtener un código nuevo.",
		"La vinculación de WhatsApp falló. Envía /whatsapp para intentarlo de nuevo.",
	},
	Portuguese: {
		"Escaneie este código com o WhatsApp: Configurações → Dispositivos conectados → Conectar um dispositivo. Se expirar, chega um novo.",
		"O WhatsApp está conectado. Agora também responderei às suas mensagens do WhatsApp.",
		"A conexão do WhatsApp expirou. Envie /whatsapp para receber um novo código.",
		"A conexão do WhatsApp falhou. Envie /whatsapp para tentar de novo.",
	},
	French: {
		"Scannez ce code avec WhatsApp : Réglages → Appareils connectés → Connecter un appareil. Un nouveau code suit s'il expire.",
		"WhatsApp est associé. Je répondrai désormais aussi à vos messages WhatsApp.",
		"L'association WhatsApp a expiré. Envoyez /whatsapp pour obtenir un nouveau code.",
		"L'association WhatsApp a échoué. Envoyez /whatsapp pour réessayer.",
	},
	German: {
		"Scanne diesen Code mit WhatsApp: Einstellungen → Verknüpfte Geräte → Gerät hinzufügen. Läuft er ab, folgt ein neuer.",
		"WhatsApp ist verbunden. Ich beantworte jetzt auch deine WhatsApp-Nachrichten.",
		"Die WhatsApp-Kopplung ist abgelaufen. Sende /whatsapp für einen neuen Code.",
		"Die WhatsApp-Kopplung ist fehlgeschlagen. Sende /whatsapp, um es erneut zu versuchen.",
	},
	Italian: {
		"Scansiona questo codice con WhatsApp: Impostazioni → Dispositivi collegati → Collega un dispositivo. Se scade, ne arriva uno nuovo.",
		"WhatsApp è collegato. Ora risponderò anche ai tuoi messaggi WhatsApp.",
		"Il collegamento di WhatsApp è scaduto. Invia /whatsapp per un nuovo codice.",
		"Il collegamento di WhatsApp non è riuscito. Invia /whatsapp per riprovare.",
	},
	Dutch: {
		"Scan deze code met WhatsApp: Instellingen → Gekoppelde apparaten → Apparaat koppelen. Verloopt hij, dan volgt een nieuwe.",
		"WhatsApp is gekoppeld. Ik beantwoord nu ook je WhatsApp-berichten.",
		"Het koppelen van WhatsApp is verlopen. Stuur /whatsapp voor een nieuwe code.",
		"Het koppelen van WhatsApp is mislukt. Stuur /whatsapp om het opnieuw te proberen.",
	},
	Russian: {
		"Отсканируйте этот код в WhatsApp: Настройки → Связанные устройства → Привязка устройства. Если он истечёт, придёт новый.",
		"WhatsApp подключён. Теперь я отвечаю и на ваши сообщения в WhatsApp.",
		"Время привязки WhatsApp истекло. Отправьте /whatsapp, чтобы получить новый код.",
		"Не удалось привязать WhatsApp. Отправьте /whatsapp, чтобы попробовать снова.",
	},
}

// Pairing returns a pairing text in lang, English when lang has none.
func Pairing(lang string, k PairingKey) string {
	if t, ok := pairingTexts[lang]; ok {
		return t[k]
	}
	return pairingTexts[English][k]
}
