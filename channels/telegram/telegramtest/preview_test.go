package telegramtest

import (
	"strings"
	"testing"
)

func TestEditMessageTextAsTheBotAPI(t *testing.T) {
	s := New(t, token)
	api := s.URL + "/bot" + token + "/"
	if status, _ := call(t, api+"sendMessage", `{"chat_id":5,"text":"draft"}`); status != 200 {
		t.Fatalf("send: %d", status)
	}
	id := s.VisibleMessages(5)[0].ID
	edit := func(text, mode string) (int, envelope) {
		return call(t, api+"editMessageText", `{"chat_id":5,"message_id":`+jsonInt(id)+`,"text":"`+text+`","parse_mode":"`+mode+`"}`)
	}
	if status, e := edit("<b>final</b>", "HTML"); status != 200 || !e.OK {
		t.Fatalf("edit: %d %+v", status, e)
	}
	if status, e := edit("<b>final</b>", "HTML"); status != 400 || !strings.HasPrefix(e.Description, "Bad Request: message is not modified") {
		t.Errorf("same text again: %d %+v", status, e)
	}
	if status, e := edit("<b>bad", "HTML"); status != 400 || !strings.Contains(e.Description, "can't parse entities") {
		t.Errorf("bad HTML: %d %+v", status, e)
	}
	v := s.VisibleMessages(5)
	if len(v) != 1 || v[0].Text != "final" || v[0].Edits() != 1 || v[0].History[0] != "draft" {
		t.Fatalf("visible = %+v", v)
	}
	s.DeleteMessage(5, id)
	if status, e := edit("again", ""); status != 400 || e.Description != "Bad Request: message to edit not found" {
		t.Errorf("edit of a deleted message: %d %+v", status, e)
	}
	if len(s.VisibleMessages(5)) != 0 {
		t.Error("a deleted message is still visible")
	}
}

func TestSendMessageDraftModes(t *testing.T) {
	s := New(t, token)
	api := s.URL + "/bot" + token + "/sendMessageDraft"
	if status, e := call(t, api, `{"chat_id":5,"draft_id":7,"text":"<i>so far</i>","parse_mode":"HTML"}`); status != 200 || !e.OK {
		t.Fatalf("draft: %d %+v", status, e)
	}
	if d := s.Drafts(5); len(d) != 1 || d[0].Text != "so far" || d[0].DraftID != 7 || !s.DraftShowing(5) {
		t.Fatalf("drafts = %+v", d)
	}
	if status, _ := call(t, api, `{"chat_id":5,"draft_id":0,"text":"x"}`); status != 400 {
		t.Errorf("draft_id 0: %d", status)
	}
	if status, _ := call(t, api, `{"chat_id":-100,"draft_id":1,"text":"x"}`); status != 400 {
		t.Errorf("draft in a group: %d", status)
	}
	call(t, s.URL+"/bot"+token+"/sendMessage", `{"chat_id":5,"text":"final"}`)
	if s.DraftShowing(5) {
		t.Error("the draft still shows after the message")
	}
	s.SetDrafts(DraftsUnknown)
	if status, e := call(t, api, `{"chat_id":5,"draft_id":7,"text":"x"}`); status != 404 || e.Description != "Not Found: method not found" {
		t.Errorf("unknown method: %d %+v", status, e)
	}
	s.SetDrafts(DraftsRefused)
	if status, e := call(t, api, `{"chat_id":5,"draft_id":7,"text":"x"}`); status != 400 || e.Description != DraftsRefusedDescription {
		t.Errorf("refused: %d %+v", status, e)
	}
}
