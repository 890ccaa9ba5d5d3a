package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// hosted is a file on the double: one a person shared (served at its
// url_private) or one the bot is uploading.
type hosted struct {
	id, name, mime string
	data           []byte
	uploaded       bool
}

func (s *Server) uploadURL(r *http.Request) map[string]any {
	name := r.FormValue("filename")
	size, err := strconv.Atoi(r.FormValue("length"))
	if name == "" || err != nil || size <= 0 {
		return map[string]any{"ok": false, "error": "invalid_arguments"}
	}
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("F%06d", s.seq)
	s.files[id] = &hosted{id: id, name: name}
	s.mu.Unlock()
	return map[string]any{"ok": true, "upload_url": s.URL + "/upload/" + id, "file_id": id}
}

// upload takes the file's bytes (multipart field "file", or a raw body),
// as files.slack.com does.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	var data []byte
	if f, _, err := r.FormFile("file"); err == nil {
		data, err = io.ReadAll(f)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	} else {
		data, _ = io.ReadAll(r.Body)
	}
	s.mu.Lock()
	h, ok := s.files[id]
	if ok {
		h.data, h.uploaded = data, true
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "no such upload", http.StatusNotFound)
		return
	}
	fmt.Fprintf(w, "OK - %d", len(data))
}

func (s *Server) completeUpload(r *http.Request) map[string]any {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(r.FormValue("files")), &files); err != nil || len(files) == 0 {
		return map[string]any{"ok": false, "error": "invalid_arguments"}
	}
	channel := r.FormValue("channel_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, f := range files {
		h, ok := s.files[f.ID]
		if !ok || !h.uploaded {
			return map[string]any{"ok": false, "error": "file_not_found"}
		}
		if channel != "" {
			s.uploads = append(s.uploads, Upload{FileID: f.ID, Channel: channel, ThreadTS: r.FormValue("thread_ts"),
				Name: h.name, Comment: r.FormValue("initial_comment"), Data: h.data})
		}
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	return map[string]any{"ok": true, "files": out}
}

// download serves url_private: only with the bot token, as Slack does
// (without it Slack redirects to a sign-in page).
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	id, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/files/"), "/")
	if !authorized(r, BotToken) {
		http.Error(w, "sign in", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	status := s.outage["files"]
	h, ok := s.files[id]
	s.mu.Unlock()
	switch {
	case status != 0:
		w.WriteHeader(status)
		return
	case !ok:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", h.mime)
	_, _ = w.Write(h.data)
}
