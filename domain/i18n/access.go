package i18n

import (
	"fmt"
	"time"
)

// Texts of sender pairing (unknown senders and the owner's /pair) and of
// identity links (/link), in their own catalogue. Not the WhatsApp device
// pairing texts (pairing.go).
const (
	AccessPairingCode    Key = "access.pairing_code"    // %s code, %s expiry time
	AccessPairingLimited Key = "access.pairing_limited" //
	AccessOwnerRequest   Key = "access.owner_request"   // %s name, %s channel:id, %s code, %s code, %s code
	AccessApprovedSender Key = "access.approved_sender" //
	AccessApproved       Key = "access.approved"        // %s channel:id, %s code
	AccessRejected       Key = "access.rejected"        // %s channel:id, %s code
	AccessCodeUnknown    Key = "access.code_unknown"    // %s code
	AccessCodeExpired    Key = "access.code_expired"    // %s code
	AccessCodeDecided    Key = "access.code_decided"    // %s code
	AccessPairList       Key = "access.pair_list"       // %s lines
	AccessPairNone       Key = "access.pair_none"       //
	AccessOwnerOnly      Key = "access.owner_only"      //
	AccessPairUsage      Key = "access.pair_usage"      //
	AccessRevoked        Key = "access.revoked"         // %s channel:id
	AccessNotPaired      Key = "access.not_paired"      // %s channel:id
	LinkUsage            Key = "link.usage"             //
	LinkDone             Key = "link.done"              // %s alias, %s canonical
	LinkUndone           Key = "link.undone"            // %s identity
	LinkList             Key = "link.list"              // %s lines
	LinkNone             Key = "link.none"              //
	LinkRefused          Key = "link.refused"           // %s reason
)

// AccessKeys lists the keys of the access catalogue.
func AccessKeys() []Key {
	return []Key{AccessPairingCode, AccessPairingLimited, AccessOwnerRequest, AccessApprovedSender, AccessApproved,
		AccessRejected, AccessCodeUnknown, AccessCodeExpired, AccessCodeDecided, AccessPairList, AccessPairNone,
		AccessOwnerOnly, AccessPairUsage, AccessRevoked, AccessNotPaired, LinkUsage, LinkDone, LinkUndone, LinkList,
		LinkNone, LinkRefused}
}

// AccessText returns a text of the access catalogue in lang (English when
// lang lacks it), formatted with args.
func AccessText(lang string, key Key, args ...any) string {
	s, ok := accessTexts[OrDefault(lang)][key]
	if !ok {
		if s, ok = accessTexts[Default][key]; !ok {
			return string(key)
		}
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

var accessTexts = map[string]map[Key]string{
	English: {
		AccessPairingCode:    "I don't know you yet. Your pairing code is %s (valid until %s). Ask my owner to approve it; I'll tell you when they do.",
		AccessPairingLimited: "You have asked for too many pairing codes. Please try again later.",
		AccessOwnerRequest:   "%s (%s) wants to talk with me. Pairing code: %s\nApprove: /pair approve %s\nReject: /pair reject %s",
		AccessApprovedSender: "My owner approved you. Go ahead, I'm listening.",
		AccessApproved:       "Approved %s (code %s). Their next message will be answered.",
		AccessRejected:       "Rejected %s (code %s).",
		AccessCodeUnknown:    "There is no pairing code %s.",
		AccessCodeExpired:    "Pairing code %s has expired. The sender gets a new one when they write again.",
		AccessCodeDecided:    "Pairing code %s was already decided.",
		AccessPairList:       "Pending pairing requests:\n%s",
		AccessPairNone:       "No pending pairing requests.",
		AccessOwnerOnly:      "Only my owner can do that.",
		AccessPairUsage:      "Usage: /pair list · /pair approve CODE · /pair reject CODE · /pair revoke channel:id",
		AccessRevoked:        "Revoked %s: they are no longer allowed.",
		AccessNotPaired:      "%s is not paired.",
		LinkUsage:            "Usage: /link channel:id channel:id (the second shares the first's profile) · /link list · /link remove channel:id",
		LinkDone:             "Linked %s to %s: they now share one profile (facts, language, personality, projects).",
		LinkUndone:           "Unlinked %s.",
		LinkList:             "Linked identities:\n%s",
		LinkNone:             "No linked identities.",
		LinkRefused:          "Could not change the link: %s",
	},
	Spanish: {
		AccessPairingCode:    "Todavía no te conozco. Tu código de emparejamiento es %s (válido hasta %s). Pide a mi dueño que lo apruebe; te avisaré cuando lo haga.",
		AccessPairingLimited: "Has pedido demasiados códigos de emparejamiento. Inténtalo más tarde.",
		AccessOwnerRequest:   "%s (%s) quiere hablar conmigo. Código de emparejamiento: %s\nAprobar: /pair approve %s\nRechazar: /pair reject %s",
		AccessApprovedSender: "Mi dueño te ha aprobado. Adelante, te escucho.",
		AccessApproved:       "Aprobado %s (código %s). Su próximo mensaje recibirá respuesta.",
		AccessRejected:       "Rechazado %s (código %s).",
		AccessCodeUnknown:    "No existe el código de emparejamiento %s.",
		AccessCodeExpired:    "El código de emparejamiento %s ha caducado. El remitente recibirá uno nuevo cuando vuelva a escribir.",
		AccessCodeDecided:    "El código de emparejamiento %s ya fue decidido.",
		AccessPairList:       "Solicitudes de emparejamiento pendientes:\n%s",
		AccessPairNone:       "No hay solicitudes de emparejamiento pendientes.",
		AccessOwnerOnly:      "Solo mi dueño puede hacer eso.",
		AccessPairUsage:      "Uso: /pair list · /pair approve CÓDIGO · /pair reject CÓDIGO · /pair revoke canal:id",
		AccessRevoked:        "Revocado %s: ya no tiene permiso.",
		AccessNotPaired:      "%s no está emparejado.",
		LinkUsage:            "Uso: /link canal:id canal:id (el segundo comparte el perfil del primero) · /link list · /link remove canal:id",
		LinkDone:             "Vinculado %s a %s: ahora comparten un perfil (datos, idioma, personalidad, proyectos).",
		LinkUndone:           "Desvinculado %s.",
		LinkList:             "Identidades vinculadas:\n%s",
		LinkNone:             "No hay identidades vinculadas.",
		LinkRefused:          "No se pudo cambiar el vínculo: %s",
	},
}

// PairingExpiry formats a pairing code's expiry for people.
func PairingExpiry(at time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return at.In(loc).Format("2 Jan 15:04 MST")
}
