package pipeline

import (
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
)

// pairingText is what an unknown sender is told: their code and until
// when it is valid, or that they asked for too many.
func pairingText(lang string, p *domain.PairingOffer, loc *time.Location) string {
	if p.Limited {
		return i18n.AccessText(lang, i18n.AccessPairingLimited)
	}
	return i18n.AccessText(lang, i18n.AccessPairingCode, p.Code, i18n.PairingExpiry(p.ExpiresAt, loc))
}
