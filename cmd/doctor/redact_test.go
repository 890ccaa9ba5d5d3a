package doctor

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// A Bot API that echoes the request path in its error does not get the bot
// token into omega doctor's report.
func TestDoctorRedactsEchoedToken(t *testing.T) {
	const token = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi"
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"ok":false,"error_code":404,"description":"Not Found: ` + r.URL.Path + `"}`))
	}))
	defer api.Close()
	t.Setenv("OMEGA_DATA_DIR", t.TempDir())
	t.Setenv("OMEGA_DATABASE_URL", "")
	t.Setenv("OMEGA_CLAUDE_BIN", filepath.Join(t.TempDir(), "no-such-claude"))
	t.Setenv("OMEGA_TELEGRAM_TOKEN", token)
	t.Setenv("OMEGA_TELEGRAM_API_URL", api.URL)
	var out bytes.Buffer
	_ = doctor(context.Background(), &out)
	report := out.String()
	if !strings.Contains(report, "FAIL  telegram") || !strings.Contains(report, "/bot[REDACTED]/getMe") {
		t.Fatalf("the echoed path is not in the report, masked:\n%s", report)
	}
	if strings.Contains(report, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		t.Fatalf("the bot token is in the doctor report:\n%s", report)
	}
}
