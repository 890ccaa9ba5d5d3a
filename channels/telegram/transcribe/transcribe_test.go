package transcribe

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTranscribe(t *testing.T) {
	tests := []struct {
		name, status, body, want, wantErr string
	}{
		{name: "text", status: "200", body: `{"text":" hello there "}`, want: "hello there"},
		{name: "empty text", status: "200", body: `{"text":"  "}`, wantErr: "empty text"},
		{name: "refused", status: "401", body: `{"error":"bad key"}`, wantErr: "status 401"},
		{name: "not json", status: "200", body: `<html>`, wantErr: "decode transcription"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/audio/transcriptions" || r.Header.Get("Authorization") != "Bearer k" {
					http.Error(w, "wrong request "+r.URL.Path, http.StatusBadRequest)
					return
				}
				if r.FormValue("model") != "whisper-1" {
					http.Error(w, "no model", http.StatusBadRequest)
					return
				}
				f, _, err := r.FormFile("file")
				if err != nil {
					http.Error(w, "no file", http.StatusBadRequest)
					return
				}
				if b, _ := io.ReadAll(f); string(b) != "OggS" {
					http.Error(w, "wrong audio", http.StatusBadRequest)
					return
				}
				w.WriteHeader(map[string]int{"200": http.StatusOK, "401": http.StatusUnauthorized}[tt.status])
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			c, err := New(srv.URL+"/v1/", "k", "whisper-1", srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Transcribe(t.Context(), "voice.ogg", []byte("OggS"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Transcribe = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New("", "", "whisper-1", http.DefaultClient); err == nil {
		t.Error("no base URL: want error")
	}
	if _, err := New("http://x", "", "whisper-1", nil); err == nil {
		t.Error("no HTTP client: want error")
	}
}
