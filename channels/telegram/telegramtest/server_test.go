package telegramtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const token = "1:test"

func TestParseHTML(t *testing.T) {
	tests := []struct {
		in, visible, err string
	}{
		{"plain", "plain", ""},
		{"<b>a</b> &lt;&gt;&amp;&quot; &#33;&#x21;", `a <>&" !!`, ""},
		{`<a href="https://x.io/?a=1&amp;b">l</a>`, "l", ""},
		{`<pre><code class="language-go">x</code></pre>`, "x", ""},
		{"AT&T", "AT&T", ""},
		{"<b>open", "", `Can't find end tag corresponding to start tag "b"`},
		{"<blink>x</blink>", "", `Unsupported start tag "blink"`},
		{"a </b>", "", "Unexpected end tag"},
		{"<b><i>x</b></i>", "", "Unmatched end tag"},
		{"<b x", "", "Unclosed start tag"},
		{"&nbsp;", "", `Unsupported HTML entity "&nbsp;"`},
		{"<code><b>x</b></code>", "", `inside "code"`},
	}
	for _, tt := range tests {
		got, err := parseHTML(tt.in)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("parseHTML(%q): %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("parseHTML(%q) error = %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && got != tt.visible:
			t.Errorf("parseHTML(%q) = %q, want %q", tt.in, got, tt.visible)
		}
	}
}

type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

func call(t *testing.T, url, body string) (int, envelope) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e envelope
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, e
}

func TestGetUpdatesHonoursOffset(t *testing.T) {
	s := New(t, token)
	first := s.PushText(1, 1, "a")
	second := s.PushText(1, 1, "b")
	_, e := call(t, s.URL+"/bot"+token+"/getUpdates", `{"offset":0}`)
	var ups []struct {
		UpdateID int64 `json:"update_id"`
	}
	if err := json.Unmarshal(e.Result, &ups); err != nil || len(ups) != 2 || ups[0].UpdateID != first {
		t.Fatalf("updates = %s (%v)", e.Result, err)
	}
	_, e = call(t, s.URL+"/bot"+token+"/getUpdates", `{"offset":`+jsonInt(second)+`}`)
	if err := json.Unmarshal(e.Result, &ups); err != nil || len(ups) != 1 || ups[0].UpdateID != second {
		t.Fatalf("after offset: %s", e.Result)
	}
	if s.Pending() != 1 {
		t.Errorf("pending = %d, want the confirmed update dropped", s.Pending())
	}
}

func TestGetUpdatesLongPollWakesOnPush(t *testing.T) {
	s := New(t, token)
	done := make(chan envelope)
	go func() {
		_, e := call(t, s.URL+"/bot"+token+"/getUpdates", `{"timeout":5}`)
		done <- e
	}()
	time.Sleep(50 * time.Millisecond) // let the poll start waiting
	s.PushText(1, 1, "late")
	select {
	case e := <-done:
		if !strings.Contains(string(e.Result), "late") {
			t.Errorf("result = %s", e.Result)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("long poll did not wake up on a new update")
	}
}

func TestScriptedFailuresAndAuth(t *testing.T) {
	s := New(t, token)
	if status, e := call(t, s.URL+"/botwrong/getMe", `{}`); status != 401 || e.OK {
		t.Errorf("wrong token: %d %+v", status, e)
	}
	s.FailNext("sendMessage", 1, 429, 3)
	s.FailNext("sendMessage", 1, 403, 0)
	status, e := call(t, s.URL+"/bot"+token+"/sendMessage", `{"chat_id":1,"text":"x"}`)
	if status != 429 || e.Parameters.RetryAfter != 3 {
		t.Errorf("429: %d %+v", status, e)
	}
	status, e = call(t, s.URL+"/bot"+token+"/sendMessage", `{"chat_id":1,"text":"x"}`)
	if status != 403 || e.Description != "Forbidden: bot was blocked by the user" {
		t.Errorf("403: %d %+v", status, e)
	}
	status, e = call(t, s.URL+"/bot"+token+"/sendMessage", `{"chat_id":1,"text":"<b>x","parse_mode":"HTML"}`)
	if status != 400 || !strings.HasPrefix(e.Description, "Bad Request: can't parse entities: ") {
		t.Errorf("bad HTML: %d %+v", status, e)
	}
	if status, _ := call(t, s.URL+"/bot"+token+"/sendMessage", `{"chat_id":1,"text":"ok"}`); status != 200 {
		t.Errorf("ok send: %d", status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	sent, err := s.WaitSent(ctx, 4)
	if err != nil || len(s.Messages(1)) != 1 || sent[3].Text != "ok" {
		t.Errorf("sent = %+v, %v", sent, err)
	}
}

func TestFileDownload(t *testing.T) {
	s := New(t, token)
	s.AddFile("f1", []byte("data"))
	_, e := call(t, s.URL+"/bot"+token+"/getFile", `{"file_id":"f1"}`)
	var f struct {
		FilePath string `json:"file_path"`
	}
	if err := json.Unmarshal(e.Result, &f); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(s.URL + "/file/bot" + token + "/" + f.FilePath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "data" {
		t.Errorf("downloaded %q", b)
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
