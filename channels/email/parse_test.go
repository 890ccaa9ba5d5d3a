package email

import (
	"strings"
	"testing"
)

func TestParseHTMLOnlyAndCharsets(t *testing.T) {
	raw := "From: =?ISO-8859-1?Q?J=F6rg?= <Joerg@Example.TEST>\r\nSubject: =?UTF-8?B?R3LDvMOfZQ==?=\r\n" +
		"Message-ID: <h1@example.test>\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=ISO-8859-1\r\n" +
		"Content-Transfer-Encoding: quoted-printable\r\n\r\n" +
		"<html><head><style>p{}</style></head><body><p>Sch=F6ne Gr=FC=DFe &amp; danke</p><div>zweite Zeile</div>" +
		"<blockquote>alter Text</blockquote></body></html>\r\n"
	m, err := parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.from != "joerg@example.test" || m.name != "Jörg" || m.thread.subject != "Grüße" || m.messageID != "<h1@example.test>" {
		t.Errorf("header: %+v", m)
	}
	if m.text != "Schöne Grüße & danke\nzweite Zeile" {
		t.Errorf("text %q", m.text)
	}
}

func TestParseSubjectOnlyAndAutomatic(t *testing.T) {
	m, err := parse([]byte("From: a@example.test\r\nSubject: call mum at six\r\n\r\n\r\n"))
	if err != nil || m.text != "call mum at six" || m.messageID != "" {
		t.Errorf("subject-only message: %+v, %v", m, err)
	}
	for _, h := range []string{"Auto-Submitted: auto-generated", "Precedence: bulk", "List-Id: <x.example.test>", "Return-Path: <>"} {
		m, err := parse([]byte("From: a@example.test\r\n" + h + "\r\n\r\nhi\r\n"))
		if err != nil || m.skip == "" {
			t.Errorf("%s: not recognised as automatic (%+v, %v)", h, m, err)
		}
	}
	if m, _ := parse([]byte("From: a@example.test\r\nAuto-Submitted: no\r\n\r\nhi\r\n")); m.skip != "" {
		t.Errorf("Auto-Submitted: no skipped: %s", m.skip)
	}
	if _, err := parse([]byte("Subject: no sender\r\n\r\nhi\r\n")); err == nil || !strings.Contains(err.Error(), "From") {
		t.Errorf("a message without From: %v", err)
	}
}
