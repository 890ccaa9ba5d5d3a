package telegramtest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// DraftSupport is how the server answers sendMessageDraft.
type DraftSupport int

const (
	// DraftsSupported: drafts are shown in private chats (Bot API 9.3+).
	DraftsSupported DraftSupport = iota
	// DraftsUnknown: the method does not exist (an older Bot API server),
	// answered with 404 "Not Found: method not found".
	DraftsUnknown
	// DraftsRefused: the method exists but drafts are not available to
	// this bot, answered with a 400.
	DraftsRefused
)

// DraftsRefusedDescription is the 400 description of DraftsRefused.
const DraftsRefusedDescription = "Bad Request: message drafts are unavailable for this bot"

// Visible is a message as the person sees it now in a chat: its current
// text after every edit, and what it showed before.
type Visible struct {
	ID        int64
	ChatID    string
	Text      string // visible text (entities parsed)
	Raw       string // text as last sent or edited, markup included
	ParseMode string
	// History holds the visible text of every version, the first send
	// included: len(History)-1 edits were accepted.
	History []string
}

// Edits is the number of accepted edits of the message.
func (v Visible) Edits() int { return len(v.History) - 1 }

// Draft is one accepted sendMessageDraft call.
type Draft struct {
	ChatID  string
	DraftID int64
	Text    string // visible text
}

// SetDrafts sets how sendMessageDraft is answered (default supported).
func (s *Server) SetDrafts(mode DraftSupport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.draftMode = mode
}

// VisibleMessages returns the messages the bot sent to chatID that are
// still there (not deleted), in order, with their current text.
func (s *Server) VisibleMessages(chatID int64) []Visible {
	id := strconv.FormatInt(chatID, 10)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Visible
	for _, v := range s.visible {
		if v.ChatID == id {
			c := *v
			c.History = append([]string(nil), v.History...)
			out = append(out, c)
		}
	}
	return out
}

// ChatCalls returns the calls to chatID of the given methods (all when
// none is given), accepted or not, in order: the Bot API calls a reply
// cost.
func (s *Server) ChatCalls(chatID int64, methods ...string) []Call {
	id := strconv.FormatInt(chatID, 10)
	var out []Call
	for _, c := range s.Sent() {
		if c.ChatID == id && (len(methods) == 0 || slices.Contains(methods, c.Method)) {
			out = append(out, c)
		}
	}
	return out
}

// Drafts returns the accepted drafts shown in chatID, in order.
func (s *Server) Drafts(chatID int64) []Draft {
	id := strconv.FormatInt(chatID, 10)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Draft
	for _, d := range s.drafts {
		if d.ChatID == id {
			out = append(out, d)
		}
	}
	return out
}

// DraftShowing reports whether chatID shows a draft now: one was sent
// and no message followed it.
func (s *Server) DraftShowing(chatID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draftOpen[strconv.FormatInt(chatID, 10)]
}

// DeleteMessage removes a message from the chat, as a person deleting
// it does; later edits of it fail with "message to edit not found".
func (s *Server) DeleteMessage(chatID, messageID int64) {
	id := strconv.FormatInt(chatID, 10)
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.visible[:0]
	for _, v := range s.visible {
		if v.ChatID != id || v.ID != messageID {
			kept = append(kept, v)
		}
	}
	s.visible = kept
	s.notify()
}

// showMessage records a message the bot sent as visible in its chat; a
// message ends the chat's draft. Callers hold s.mu.
func (s *Server) showMessage(id int64, chatID, raw, parseMode, visible string) {
	s.visible = append(s.visible, &Visible{ID: id, ChatID: chatID, Text: visible, Raw: raw, ParseMode: parseMode, History: []string{visible}})
	delete(s.draftOpen, chatID)
	s.notify()
}

// sendMessageDraft shows a draft in a private chat, as the Bot API does
// from 9.3 on: chat_id of a private chat, non-zero draft_id, 1-4096
// characters of text.
func (s *Server) sendMessageDraft(w http.ResponseWriter, p params) {
	s.mu.Lock()
	mode := s.draftMode
	s.mu.Unlock()
	switch mode {
	case DraftsUnknown:
		s.record("sendMessageDraft", p, nil, "Not Found: method not found")
		writeError(w, http.StatusNotFound, "Not Found: method not found", 0)
		return
	case DraftsRefused:
		s.reject(w, "sendMessageDraft", p, DraftsRefusedDescription)
		return
	}
	chatID, _ := strconv.ParseInt(p.get("chat_id"), 10, 64)
	draftID, _ := strconv.ParseInt(p.get("draft_id"), 10, 64)
	visible, desc := checkText(p)
	switch {
	case chatID <= 0:
		desc = "Bad Request: draft messages can be sent only to private chats"
	case draftID == 0:
		desc = "Bad Request: draft_id must be non-zero"
	}
	if desc != "" {
		s.reject(w, "sendMessageDraft", p, desc)
		return
	}
	s.record("sendMessageDraft", p, nil, "")
	s.mu.Lock()
	s.drafts = append(s.drafts, Draft{ChatID: p.get("chat_id"), DraftID: draftID, Text: visible})
	s.draftOpen[p.get("chat_id")] = true
	s.notify()
	s.mu.Unlock()
	writeOK(w, true)
}

// editMessageText edits a visible message of the bot. Like the real API
// it refuses an edit that changes nothing ("message is not modified") and
// one of a message that is gone ("message to edit not found").
func (s *Server) editMessageText(w http.ResponseWriter, p params) {
	visible, desc := checkText(p)
	if desc != "" {
		s.reject(w, "editMessageText", p, desc)
		return
	}
	msgID, _ := strconv.ParseInt(p.get("message_id"), 10, 64)
	s.mu.Lock()
	var target *Visible
	for _, v := range s.visible {
		if v.ChatID == p.get("chat_id") && v.ID == msgID {
			target = v
		}
	}
	switch {
	case target == nil:
		desc = "Bad Request: message to edit not found"
	case target.Raw == p.get("text") && strings.EqualFold(target.ParseMode, p.get("parse_mode")):
		desc = "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
	default:
		target.Text, target.Raw, target.ParseMode = visible, p.get("text"), p.get("parse_mode")
		target.History = append(target.History, visible)
	}
	s.mu.Unlock()
	if desc != "" {
		s.reject(w, "editMessageText", p, desc)
		return
	}
	s.recordEdit(p, msgID)
	writeOK(w, s.messageResult(p, msgID, map[string]any{"text": visible, "edit_date": 1}))
}

// checkText validates a text parameter as sendMessage does and returns
// the visible text, or the description of the refusal.
func checkText(p params) (string, string) {
	text := p.get("text")
	visible := text
	if strings.EqualFold(p.get("parse_mode"), "HTML") {
		var err error
		if visible, err = parseHTML(text); err != nil {
			return "", "Bad Request: can't parse entities: " + err.Error()
		}
	}
	switch {
	case p.get("chat_id") == "":
		return "", "Bad Request: chat not found"
	case strings.TrimSpace(visible) == "":
		return "", "Bad Request: message text is empty"
	case utf16Len(visible) > 4096:
		return "", "Bad Request: message is too long"
	}
	return visible, ""
}

// recordEdit stores an accepted edit with the id of the edited message.
func (s *Server) recordEdit(p params, msgID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, Call{
		Method: "editMessageText", ChatID: p.get("chat_id"), Text: p.get("text"),
		ParseMode: p.get("parse_mode"), MessageID: msgID,
	})
	s.notify()
}
