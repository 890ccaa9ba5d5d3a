package i18n

import (
	"regexp"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		text string
		want string
	}{
		{"hello", English},
		{"hi there, can you help me with my email?", English},
		{"Schedule for tomorrow to call Juan at 5pm", English},
		{"", English},
		{"👍", English},
		{"Hola, ¿cómo estás?", Spanish},
		{"Necesito que me recuerdes llamar a mi madre mañana por la tarde", Spanish},
		{"Olá, tudo bem com você?", Portuguese},
		{"Eu preciso de ajuda com o meu projeto hoje", Portuguese},
		{"Bonjour, comment ça va ?", French},
		{"Je veux que tu me rappelles d'appeler ma mère", French},
		{"Hallo, wie geht es dir?", German},
		{"Ich brauche heute Hilfe mit meiner Steuererklärung", German},
		{"Ciao, come stai?", Italian},
		{"Ho bisogno di una mano con il mio progetto oggi", Italian},
		{"Hallo, hoe gaat het met je?", Dutch},
		{"Ik wil dat je me vandaag helpt met mijn project", Dutch},
		{"Привет, как дела?", Russian},
		{"Напомни мне завтра позвонить маме", Russian},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := Detect(tt.text); got != tt.want {
				t.Errorf("Detect(%q) = %s, want %s", tt.text, got, tt.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"es", Spanish, true},
		{"Español", Spanish, true},
		{"Spanish", Spanish, true},
		{" spanish ", Spanish, true},
		{"en-US", English, true},
		{"pt_BR", Portuguese, true},
		{"português", Portuguese, true},
		{"Français", French, true},
		{"Deutsch", German, true},
		{"italiano", Italian, true},
		{"Nederlands", Dutch, true},
		{"русский", Russian, true},
		{"ru", Russian, true},
		{"klingon", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := Normalize(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Normalize(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	for _, lang := range Languages() {
		if got, ok := Normalize(lang); !ok || got != lang {
			t.Errorf("Normalize(%q) = %q, %v; canonical names must map to themselves", lang, got, ok)
		}
	}
}

var verbRE = regexp.MustCompile(`%[sdv]`)

func TestCatalogueComplete(t *testing.T) {
	if len(catalogue) != len(Languages()) {
		t.Fatalf("catalogue has %d languages, want %d", len(catalogue), len(Languages()))
	}
	for _, lang := range Languages() {
		for _, key := range Keys() {
			if !Has(lang, key) {
				t.Errorf("%s: missing %s", lang, key)
				continue
			}
			got := catalogue[lang][key]
			if strings.TrimSpace(got) == "" {
				t.Errorf("%s: %s is empty", lang, key)
			}
			want := strings.Join(verbRE.FindAllString(catalogue[English][key], -1), ",")
			if v := strings.Join(verbRE.FindAllString(got, -1), ","); v != want {
				t.Errorf("%s: %s has placeholders %q, English has %q", lang, key, v, want)
			}
		}
		if n := len(catalogue[lang]); n != len(Keys()) {
			t.Errorf("%s: %d texts, want %d (a key missing from Keys()?)", lang, n, len(Keys()))
		}
	}
}

func TestHelpListsEveryCommand(t *testing.T) {
	cmds := []string{"/help", "/status", "/uptime", "/forget", "/facts", "/memory", "/tasks", "/cancel",
		"/language", "/personality", "/purge", "/projects", "/project ", "/heartbeat", "/learning", "/skills", "/whatsapp"}
	for _, lang := range Languages() {
		help := Text(lang, Help)
		for _, c := range cmds {
			if !strings.Contains(help, c) {
				t.Errorf("%s help lacks %s", lang, c)
			}
		}
	}
}

func TestText(t *testing.T) {
	if got := Text("Spanish", TaskScheduled, "Llamar a Juan", "24 feb 17:00"); got != "✓ Recordatorio programado: Llamar a Juan — 24 feb 17:00" {
		t.Errorf("got %q", got)
	}
	if got := Text("klingon", BusyAck); got != "Got it, I'll get to this next." {
		t.Errorf("unknown language should fall back to English, got %q", got)
	}
	if got := Text("es", NoTasks); got != "No tienes tareas pendientes." {
		t.Errorf("codes should be accepted, got %q", got)
	}
	if got := Text(English, Key("nope")); got != "nope" {
		t.Errorf("unknown key should return the key, got %q", got)
	}
}

func TestStatusMessages(t *testing.T) {
	for _, lang := range Languages() {
		a, b := StatusMessages(lang)
		if a == "" || b == "" || a == b {
			t.Errorf("%s: nudge %q, still working %q", lang, a, b)
		}
	}
	a, _ := StatusMessages("Spanish")
	if a != "Esto está tardando un poco..." {
		t.Errorf("Spanish nudge = %q", a)
	}
	if a, _ := StatusMessages("Klingon"); a != "This is taking a moment..." {
		t.Errorf("fallback nudge = %q", a)
	}
}

func TestClassifyProviderError(t *testing.T) {
	tests := []struct {
		raw  string
		want Key
	}{
		{"claude CLI timed out after 3600s", ErrTimeout},
		{"context deadline exceeded", ErrTimeout},
		{"HTTP 429: rate_limit_error", ErrRateLimited},
		{"anthropic: overloaded_error", ErrRateLimited},
		{"HTTP 401 invalid x-api-key", ErrAuth},
		{"Not logged in. Please run /login", ErrAuth},
		{"HTTP 503 Service Unavailable", ErrServer},
		{"HTTP 400: prompt is too long", ErrBadRequest},
		{"json: cannot unmarshal string into Go value", ErrMalformed},
		{"exit status 1", ErrUnknown},
	}
	for _, tt := range tests {
		if got := ClassifyProviderError(tt.raw); got != tt.want {
			t.Errorf("ClassifyProviderError(%q) = %s, want %s", tt.raw, got, tt.want)
		}
	}
	if got := FriendlyProviderError("German", "timed out"); !strings.Contains(got, "zu lange") {
		t.Errorf("German timeout = %q", got)
	}
}
