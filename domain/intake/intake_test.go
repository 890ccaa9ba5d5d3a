package intake

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateIntake(t *testing.T) {
	ok := Intake{Channel: "http", SenderID: "alice", SenderName: "Alice", ChatID: "c1", PlatformID: "m1", Text: "hi\n\tthere"}
	with := func(f func(*Intake)) Intake { in := ok; f(&in); return in }
	long := strings.Repeat("x", MaxIdentityLen+1)
	cases := []struct {
		name  string
		in    Intake
		field string // refused field; "" when accepted
		want  Intake // expected output when accepted (zero: same as in)
	}{
		{name: "plain", in: ok},
		{name: "no channel", in: with(func(i *Intake) { i.Channel = "" }), field: "channel"},
		{name: "odd channel", in: with(func(i *Intake) { i.Channel = "Tele gram" }), field: "channel"},
		{name: "long channel", in: with(func(i *Intake) { i.Channel = strings.Repeat("a", 33) }), field: "channel"},
		{name: "no sender", in: with(func(i *Intake) { i.SenderID = "" }), field: "sender_id"},
		{name: "blank sender", in: with(func(i *Intake) { i.SenderID = "   " }), field: "sender_id"},
		{name: "long sender", in: with(func(i *Intake) { i.SenderID = strings.Repeat("u", 2800) }), field: "sender_id"},
		{name: "sender just fits", in: with(func(i *Intake) { i.SenderID = long[:MaxIdentityLen] })},
		{name: "NUL in sender", in: with(func(i *Intake) { i.SenderID = "a\x00b" }), field: "sender_id"},
		{name: "newline in sender", in: with(func(i *Intake) { i.SenderID = "a\nb" }), field: "sender_id"},
		{name: "bad UTF-8 sender", in: with(func(i *Intake) { i.SenderID = "a\xffb" }), field: "sender_id"},
		{name: "long chat", in: with(func(i *Intake) { i.ChatID = long }), field: "chat_id"},
		{name: "NUL in chat", in: with(func(i *Intake) { i.ChatID = "\x00" }), field: "chat_id"},
		{name: "long platform id", in: with(func(i *Intake) { i.PlatformID = long }), field: "platform_id"},
		{name: "C1 control in platform id", in: with(func(i *Intake) { i.PlatformID = "a\u0085" }), field: "platform_id"},
		{name: "NUL in text", in: with(func(i *Intake) { i.Text = "hello\x00world" }), field: "text"},
		{name: "bad UTF-8 text", in: with(func(i *Intake) { i.Text = "caf\xe9" }), field: "text"},
		{name: "name cleaned", in: with(func(i *Intake) { i.SenderName = " Al\x00ice\n\xff " }),
			want: with(func(i *Intake) { i.SenderName = "Al ice \uFFFD" })},
		{name: "long name cut", in: with(func(i *Intake) { i.SenderName = strings.Repeat("é", 200) }),
			want: with(func(i *Intake) { i.SenderName = strings.Repeat("é", MaxNameLen/2) })},
		{name: "text controls dropped", in: with(func(i *Intake) { i.Text = "a\x1b[31mb\r\n\tc\x7f" }),
			want: with(func(i *Intake) { i.Text = "a[31mb\r\n\tc" })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ValidateIntake(c.in, 0)
			if c.field != "" {
				var ie *InvalidMessageError
				if !errors.As(err, &ie) || ie.Field != c.field || !errors.Is(err, ErrInvalidMessage) {
					t.Fatalf("err = %v, want an invalid %s", err, c.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			want := c.want
			if want == (Intake{}) {
				want = c.in
			}
			if got != want {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestValidateIntakeTruncatesText(t *testing.T) {
	got, err := ValidateIntake(Intake{Channel: "http", SenderID: "a", Text: strings.Repeat("é", 10)}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != "éé"+truncatedNote {
		t.Fatalf("text = %q", got.Text)
	}
}
