package email

import "testing"

func TestStripQuoted(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "Hello\nthere", "Hello\nthere"},
		{"signature", "Ok, thanks.\n-- \nAlice\n+1 555", "Ok, thanks."},
		{"gmail", "Yes please.\n\nOn Thu, 26 Nov 2026 at 10:00, omega <o@x.test> wrote:\n> Shall I?\n> ok", "Yes please."},
		{"wrapped intro", "Sure.\nOn Thu, 26 Nov 2026 at 10:00, omega <o@x.test>\nwrote:\n> Shall I?", "Sure."},
		{"german", "Ja.\nAm 26.11.2026 um 10:00 schrieb omega <o@x.test>:\n> Soll ich?", "Ja."},
		{"outlook", "Fine.\n\n-----Original Message-----\nFrom: omega\nSent: today", "Fine."},
		{"interleaved", "> Shall I book it?\nYes.\n> For two?\nFor three.", "Yes.\nFor three."},
		{"crlf and trailing blanks", "Hi\r\n\r\n\r\n", "Hi"},
		{"a dash line is not a signature", "a - b\n--- c", "a - b\n--- c"},
	}
	for _, c := range cases {
		if got := stripQuoted(c.in); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestReplyHeaders(t *testing.T) {
	th := thread{subject: "RE: Plans", messageID: "<b@x>", references: []string{"<a@x>"}}
	subject, inReplyTo, refs := th.replyHeaders()
	if subject != "RE: Plans" || inReplyTo != "<b@x>" || len(refs) != 2 || refs[0] != "<a@x>" || refs[1] != "<b@x>" {
		t.Errorf("got %q %q %v", subject, inReplyTo, refs)
	}
	long := thread{subject: "x", messageID: "<last@x>"}
	for i := 0; i < 40; i++ {
		long.references = append(long.references, "<r"+itoa(i)+"@x>")
	}
	_, _, refs = long.replyHeaders()
	if len(refs) != maxReferences || refs[0] != "<r0@x>" || refs[len(refs)-1] != "<last@x>" {
		t.Errorf("references kept %d: first %s last %s", len(refs), refs[0], refs[len(refs)-1])
	}
}
