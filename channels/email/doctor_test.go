package email

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels"
)

// `omega doctor` logs in to both servers and says which one refused.
func TestDoctorLogsInToBoth(t *testing.T) {
	s := startServer(t)
	cfg := s.config()
	cfg.AllowedAddresses = Addresses{alice}
	for _, f := range doctor(t.Context(), &cfg, channels.Env{}) {
		if f.Level != channels.LevelOK {
			t.Errorf("finding %+v", f)
		}
	}
	cfg.Password = "wrong"
	findings := doctor(t.Context(), &cfg, channels.Env{})
	if len(findings) != 2 || findings[0].Level != channels.LevelFail || !strings.HasPrefix(findings[0].Detail, "IMAP") ||
		findings[1].Level != channels.LevelFail || !strings.HasPrefix(findings[1].Detail, "SMTP") {
		t.Errorf("with a wrong password: %+v", findings)
	}
	for _, f := range findings {
		if strings.Contains(f.Detail, "wrong") {
			t.Errorf("the password shows: %s", f.Detail)
		}
	}
}
