package channels

import "testing"

type namedPreview string

func (p namedPreview) ID() string { return string(p) }

func TestLivePreviewsKeepOnePerChat(t *testing.T) {
	var l LivePreviews[namedPreview]
	if _, ok := l.Replace("chat", "p1"); ok {
		t.Fatal("the first preview of a chat replaced one")
	}
	if old, ok := l.Replace("chat", "p2"); !ok || old != "p1" {
		t.Fatalf("Replace returned %q %v, want p1 ended", old, ok)
	}
	l.Replace("other", "p9")
	if _, ok := l.Take("chat", "p1"); ok {
		t.Fatal("Take of a preview no longer live took one")
	}
	if p, ok := l.Take("chat", "p2"); !ok || p != "p2" {
		t.Fatalf("Take = %q %v, want p2", p, ok)
	}
	if _, ok := l.Take("chat", ""); ok {
		t.Fatal("a chat whose preview was taken still had one")
	}
	if p, ok := l.Take("other", ""); !ok || p != "p9" {
		t.Fatalf("Take with no id = %q %v, want the live one", p, ok)
	}
}
