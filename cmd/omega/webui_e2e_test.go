package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// webUIServe starts the built binary with an API token and returns its URL.
func webUIServe(t *testing.T, token string) string {
	url, _, _ := webUIServeEnv(t, token)
	return url
}

// webUIServeEnv is webUIServe that also returns the binary and its
// environment, for CLI commands beside the server.
func webUIServeEnv(t *testing.T, token string) (string, string, []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	vars, _ := storeBackends()[0].env(t)
	e := newShutdownEnv(t, vars, nil)
	env := append(e.env, "OMEGA_API_TOKEN="+token)
	startServe(t, bin, env)
	waitHTTP(t, e.url)
	return e.url, bin, env
}

// get fetches url with the client and returns the final status and body.
func get(t *testing.T, c *http.Client, url string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Under omega serve the audit page is the web UI's front door: /ui/, /ui
// and the server's root (which redirect there) answer it with the bearer
// token, and after ?token= (at /ui/ or at the root) the cookie alone does.
func TestServeWebUIFrontDoor(t *testing.T) {
	const token = "front-door-token"
	url := webUIServe(t, token)
	bearer := map[string]string{"Authorization": "Bearer " + token}
	for _, p := range []string{"/ui/", "/ui", "/"} {
		code, body := get(t, http.DefaultClient, url+p, bearer)
		if code != http.StatusOK || !strings.Contains(body, `id="rows"`) {
			t.Errorf("GET %s with the bearer token: %d\n%s", p, code, body)
		}
	}
	if code, _ := get(t, http.DefaultClient, url+"/ui/", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /ui/ without credentials: %d, want 401", code)
	}
	for _, signIn := range []string{"/ui/?token=", "/?token="} {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		if code, body := get(t, c, url+signIn+token, nil); code != http.StatusOK || !strings.Contains(body, `id="rows"`) {
			t.Fatalf("GET %s: %d\n%s", signIn, code, body)
		}
		if code, body := get(t, c, url+"/ui/", nil); code != http.StatusOK || !strings.Contains(body, `id="rows"`) {
			t.Fatalf("GET /ui/ with the cookie from %s: %d\n%s", signIn, code, body)
		}
	}
	// A stale link or a bad filter answers a page in the layout that says
	// what was wrong, with the way back.
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/ui/turns/0b9f4a9e-0000-4000-8000-000000000000", http.StatusNotFound, "No turn 0b9f4a9e-0000-4000-8000-000000000000 is on record."},
		{"/ui/builds/0b9f4a9e", http.StatusNotFound, "No build 0b9f4a9e is on record."},
		{"/ui/usage?since=yesterday", http.StatusBadRequest, "want RFC 3339"},
		{"/ui/nothing", http.StatusNotFound, "omega has no page at /ui/nothing."},
	} {
		code, body := get(t, http.DefaultClient, url+tc.path, bearer)
		if code != tc.code || !strings.Contains(body, tc.want) || !strings.Contains(body, `<a href="/ui/">Back to the audit</a>`) {
			t.Errorf("GET %s: %d, want %d and a page saying %q\n%s", tc.path, code, tc.code, tc.want, body)
		}
	}
	if code, _ := get(t, http.DefaultClient, url+"/nothing", bearer); code != http.StatusNotFound {
		t.Errorf("GET /nothing: %d, want 404", code)
	}
	// Paths that are not canonical still name no route.
	for _, p := range []string{"/ui//", "/ui/./", "/api//audit"} {
		if code, _ := get(t, http.DefaultClient, url+p, bearer); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
}

// The sender page says who set the heartbeat interval: here the command
// line, not the agent.
func TestServeSenderPageSaysWhoSetTheInterval(t *testing.T) {
	const token = "interval-token"
	url, bin, env := webUIServeEnv(t, token)
	if out, errs, err := runBin(t, bin, env, "heartbeat", "interval", "5"); err != nil {
		t.Fatalf("heartbeat interval: %v\n%s%s", err, out, errs)
	}
	// The server learns of the other process's append when it next polls.
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := get(t, http.DefaultClient, url+"/ui/senders/telegram/42", map[string]string{"Authorization": "Bearer " + token})
		if code == http.StatusOK && strings.Contains(body, "Every 5 min") {
			if !strings.Contains(body, "Every 5 min (set with omega heartbeat interval).") || strings.Contains(body, "set by the agent") {
				t.Fatalf("sender page:\n%s", body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the interval never reached the sender page (%d):\n%s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// In a browser, against omega serve: /ui lands on the audit page, and
// the header's links lead back to it from a sender page.
func TestServeWebUIBrowser(t *testing.T) {
	browserPath := chromiumPath(t)
	const token = "browser-token"
	url := webUIServe(t, token)
	ctx, closeBrowser := headlessBrowser(browserPath)
	defer closeBrowser()

	var loc, title string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url+"/ui?token="+token),
		chromedp.WaitVisible(`#rows`),
		chromedp.Location(&loc),
		chromedp.Title(&title),
	); err != nil {
		t.Fatalf("/ui?token=: %v", err)
	}
	if !strings.HasSuffix(loc, "/ui/") {
		t.Fatalf("/ui?token= ended at %q (%q)", loc, title)
	}
	for _, link := range []string{`header nav a`, `header a.brand`} {
		if err := chromedp.Run(ctx,
			chromedp.Navigate(url+"/ui/senders/http/nobody"),
			chromedp.WaitVisible(link),
			chromedp.Click(link),
			chromedp.WaitVisible(`#rows`),
			chromedp.Location(&loc),
		); err != nil {
			t.Fatalf("following %s: %v", link, err)
		}
		if !strings.HasSuffix(loc, "/ui/") {
			t.Fatalf("%s led to %q", link, loc)
		}
	}
}

// headlessBrowser starts the browser at path for one test's steps, which
// must end within a minute; stop stops it.
func headlessBrowser(path string) (ctx context.Context, stop func()) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	return ctx, func() { cancelTimeout(); cancelCtx(); cancelAlloc() }
}

// chromiumPath finds a browser or skips (failing under
// OMEGA_TEST_REQUIRE_BROWSER=1, as the webui tests do).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("OMEGA_TEST_REQUIRE_BROWSER") == "1" {
		t.Fatal("no Chromium found and OMEGA_TEST_REQUIRE_BROWSER=1: apt-get install -y chromium")
	}
	t.Skip("browser test skipped: no Chromium found (apt-get install -y chromium)")
	return ""
}
