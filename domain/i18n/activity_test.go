package i18n

import "testing"

func TestActivity(t *testing.T) {
	cases := []struct{ lang, tool, target, want string }{
		{"English", "Read", "notes.md", "Reading notes.md…"},
		{"Spanish", "Bash", "go test ./...", "Ejecutando go test ./...…"},
		{"English", "Bash", "", "Running a command…"},
		{"German", "mcp__calendar__list", "", "Nutze mcp__calendar__list…"},
		{"Klingon", "Grep", "TODO", "Searching TODO…"},
		{"Russian", "", "", "Работаю…"},
	}
	for _, c := range cases {
		if got := Activity(c.lang, c.tool, c.target); got != c.want {
			t.Errorf("Activity(%q, %q, %q) = %q, want %q", c.lang, c.tool, c.target, got, c.want)
		}
	}
	for _, lang := range Languages() {
		for _, tool := range []string{"Read", "Edit", "Bash", "Grep", "WebFetch", "Other", ""} {
			if Activity(lang, tool, "x") == "" || Activity(lang, tool, "") == "" {
				t.Errorf("%s has no activity line for %q", lang, tool)
			}
		}
	}
}
