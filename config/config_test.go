package config

import (
	"errors"
	"strings"
	"testing"
)

func TestLoadDefaults(t *testing.T) {
	c, err := LoadFrom(map[string]string{"HOME": "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend() != "sqlite" || c.HTTPAddr != "127.0.0.1:8787" || !strings.HasSuffix(c.SQLitePath(), "/.omega/omega.db") {
		t.Fatalf("defaults = %+v", c)
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	_, err := LoadFrom(map[string]string{
		"OMEGA_DATA_DIR":     "/tmp/x",
		"OMEGA_DATABASE_URL": "mysql://x",
		"OMEGA_LOG_LEVEL":    "loud",
		"OMEGA_HTTP_ADDR":    "0.0.0.0:8787",
		"OMEGA_TIMEZONE":     "Mars/Olympus",
	})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	for _, want := range []string{"OMEGA_DATABASE_URL", "OMEGA_LOG_LEVEL", "OMEGA_API_TOKEN", "OMEGA_TIMEZONE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}

func TestNonLoopbackWithToken(t *testing.T) {
	if _, err := LoadFrom(map[string]string{"OMEGA_DATA_DIR": "/tmp/x", "OMEGA_HTTP_ADDR": "0.0.0.0:8787", "OMEGA_API_TOKEN": "s3cret"}); err != nil {
		t.Fatal(err)
	}
}

func TestBadDurationIsAnError(t *testing.T) {
	if _, err := LoadFrom(map[string]string{"OMEGA_CONVERSATION_IDLE": "soon"}); err == nil {
		t.Fatal("bad duration accepted")
	}
}
