package signaltest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type sendParams struct {
	Recipient   many     `json:"recipient"`
	GroupID     string   `json:"groupId"`
	Message     string   `json:"message"`
	TextStyle   []string `json:"textStyle"`
	Attachments []string `json:"attachments"`
	ID          string   `json:"id"`
}

// many is a parameter given as one JSON value or an array of them, as
// signal-cli takes both.
type many []string

func (m *many) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*m = many{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*m = list
	return nil
}

// rpc serves POST /api/v1/rpc.
func (s *Server) rpc(w http.ResponseWriter, r *http.Request) {
	if s.blocked(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	var req rpcRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		answer(w, nil, nil, rpcErr(-32700, "parse error", nil))
		return
	}
	var p sendParams
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			answer(w, req.ID, nil, rpcErr(-32600, err.Error(), nil))
			return
		}
	}
	switch req.Method {
	case "version":
		answer(w, req.ID, map[string]any{"version": "0.13.99-signaltest"}, nil)
	case "send":
		res, e := s.send(p)
		answer(w, req.ID, res, e)
	case "sendTyping":
		s.mu.Lock()
		s.typing = append(s.typing, chat(p))
		s.mu.Unlock()
		answer(w, req.ID, map[string]any{}, nil)
	case "getAttachment":
		data, ok := s.attachment(p.ID)
		if !ok {
			answer(w, req.ID, nil, rpcErr(-1, "Unable to find attachment", nil))
			return
		}
		answer(w, req.ID, map[string]any{"data": data}, nil)
	default:
		answer(w, req.ID, nil, rpcErr(-32601, "Method not implemented", nil))
	}
}

func chat(p sendParams) string {
	if p.GroupID != "" {
		return "group:" + p.GroupID
	}
	return strings.Join(p.Recipient, ",")
}

// send records a message, or refuses it as queued by RefuseNext.
func (s *Server) send(p sendParams) (any, map[string]any) {
	if len(p.Recipient) == 0 && p.GroupID == "" {
		return nil, rpcErr(-1, "No recipients given", nil)
	}
	if p.Message == "" && len(p.Attachments) == 0 {
		return nil, rpcErr(-1, "Sending empty message is not allowed, either a message or an attachment must be given.", nil)
	}
	var atts []Attachment
	for _, a := range p.Attachments {
		att, ok := parseDataURI(a)
		if !ok {
			return nil, rpcErr(-1, "Invalid attachment", nil)
		}
		atts = append(atts, att)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	ts := s.clock
	recipient := map[string]any{"number": chat(p), "uuid": "aci-" + chat(p)}
	if len(s.refusals) > 0 {
		f := s.refusals[0]
		s.refusals = s.refusals[1:]
		if f.code != 0 {
			return nil, rpcErr(f.code, "Invalid group id", nil)
		}
		result := map[string]any{"recipientAddress": recipient, "type": f.resultType}
		if f.retryAfter > 0 {
			result["retryAfterSeconds"] = f.retryAfter
		}
		resp := map[string]any{"timestamp": ts, "results": []any{result}}
		return nil, rpcErr(-1, "Failed to send message", map[string]any{"response": resp})
	}
	m := Sent{GroupID: p.GroupID, Message: p.Message, TextStyles: p.TextStyle, Attachments: atts, Timestamp: ts}
	if p.GroupID == "" {
		m.Recipient = strings.Join(p.Recipient, ",")
	}
	s.sent = append(s.sent, m)
	return map[string]any{"timestamp": ts, "results": []any{map[string]any{"recipientAddress": recipient, "type": "SUCCESS"}}}, nil
}

// parseDataURI reads "data:<mime>;filename=<name>;base64,<data>".
func parseDataURI(s string) (Attachment, bool) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return Attachment{}, false
	}
	meta, b64, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return Attachment{}, false
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return Attachment{}, false
	}
	parts := strings.Split(strings.TrimSuffix(meta, ";base64"), ";")
	a := Attachment{MIME: parts[0], Data: data}
	for _, p := range parts[1:] {
		if name, ok := strings.CutPrefix(p, "filename="); ok {
			a.Name = name
		}
	}
	return a, true
}

func rpcErr(code int, msg string, data any) map[string]any {
	return map[string]any{"code": code, "message": msg, "data": data}
}

func answer(w http.ResponseWriter, id json.RawMessage, result any, e map[string]any) {
	body := map[string]any{"jsonrpc": "2.0", "id": id}
	if e != nil {
		body["error"] = e
	} else {
		body["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}
