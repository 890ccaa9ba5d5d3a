// Package emailtest runs a real Dovecot (IMAP, LMTP and, on request, its
// SMTP submission service and TLS) on loopback ports with a throwaway
// configuration, users and Maildirs under the test's temporary
// directory. Dovecot's submission service needs an MTA to relay to: a
// go-smtp server stands in for it and delivers to Dovecot's LMTP; the
// same double can take submissions directly. Tests import it; omega's
// code never does.
package emailtest

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/omega-gateway/omega/internal/freeport"
)

// Password is every test user's password.
const Password = "secret-pw"

// Dovecot is a running Dovecot.
type Dovecot struct {
	IMAPAddr string // plain, STARTTLS with Options.TLS
	LMTPAddr string
	// IMAPSAddr is IMAP over TLS (Options.TLS).
	IMAPSAddr string
	// SubmissionAddr is Dovecot's submission service (Options.Submission;
	// STARTTLS with Options.TLS), SubmissionsAddr the same over implicit
	// TLS (both options).
	SubmissionAddr, SubmissionsAddr string
	// TLSConfig trusts the server's certificate (Options.TLS).
	TLSConfig *tls.Config
	// Relay is the MTA Dovecot's submission service relays to
	// (Options.Submission): it delivers over LMTP and can refuse.
	Relay *Submission

	opts Options
	dir  string
	bin  string
	cmd  *exec.Cmd
	conf string
}

// Options change the server.
type Options struct {
	// NoIdle leaves IDLE out of the capabilities, as some servers do.
	NoIdle bool
	// TLS serves IMAPS and STARTTLS with a throwaway certificate for
	// localhost and 127.0.0.1.
	TLS bool
	// Submission runs Dovecot's own SMTP submission service, relaying
	// through an MTA double to LMTP.
	Submission bool
}

// RequireVar, set to 1, turns a missing dovecot into a failure (CI).
const RequireVar = "OMEGA_TEST_REQUIRE_EMAIL"

// StartDovecot starts Dovecot with the users given (full addresses), or
// skips the test, saying why, when dovecot is not installed.
func StartDovecot(t *testing.T, users ...string) *Dovecot {
	t.Helper()
	return StartDovecotWith(t, Options{}, users...)
}

// StartDovecotWith is StartDovecot with options.
func StartDovecotWith(t *testing.T, opts Options, users ...string) *Dovecot {
	t.Helper()
	return startDovecot(t, opts, freeport.Addrs, users...)
}

// startDovecot is StartDovecotWith choosing its ports with choose.
func startDovecot(t *testing.T, opts Options, choose func(testing.TB, int) []string, users ...string) *Dovecot {
	t.Helper()
	bin, err := exec.LookPath("dovecot")
	if err != nil {
		unavailable(t, "dovecot is not installed (apt-get install -y dovecot-imapd dovecot-lmtpd dovecot-submissiond)")
	}
	// The configuration below is Dovecot 2.3's (Debian bookworm); 2.4
	// renamed most settings.
	if out, err := exec.Command(bin, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "2.3.") {
		unavailable(t, fmt.Sprintf("this kit writes a Dovecot 2.3 configuration; dovecot --version says %q (%v)", strings.TrimSpace(string(out)), err))
	}
	dir := t.TempDir()
	uid, gid := mailOwner(t, dir)
	d := &Dovecot{opts: opts, dir: dir, bin: bin, conf: filepath.Join(dir, "dovecot.conf")}
	var passwd strings.Builder
	for _, u := range users {
		fmt.Fprintf(&passwd, "%s:{PLAIN}%s::::::\n", u, Password)
	}
	write(t, filepath.Join(dir, "passwd"), passwd.String())
	if opts.TLS {
		d.TLSConfig = writeCertificate(t, dir)
	}
	if opts.Submission {
		d.Relay = startRelay(t, d)
	}
	t.Cleanup(d.Stop)
	// The ports are free when chosen but must be closed before Dovecot
	// binds them, and another process on the machine may take one in
	// between: such a start is retried on fresh ports.
	for attempt := 1; ; attempt++ {
		d.usePorts(choose(t, 5))
		write(t, d.conf, d.config(uid, gid))
		err := d.launch()
		if err == nil {
			return d
		}
		log := d.Log()
		d.Stop()
		if attempt == portAttempts || !strings.Contains(log, "Address already in use") {
			t.Fatalf("%v\n%s", err, log)
		}
		t.Logf("dovecot found a port taken, starting again on fresh ports: %v", err)
		if err := os.Remove(filepath.Join(dir, "dovecot.log")); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// portAttempts bounds the starts on fresh ports when another process
// takes one of the chosen ports first.
const portAttempts = 5

func (d *Dovecot) usePorts(addrs []string) {
	d.IMAPAddr, d.LMTPAddr = addrs[0], addrs[1]
	if d.opts.TLS {
		d.IMAPSAddr = addrs[2]
	}
	if d.opts.Submission {
		d.SubmissionAddr = addrs[3]
		if d.opts.TLS {
			d.SubmissionsAddr = addrs[4]
		}
	}
}

// unavailable skips the test, or fails it where the email tests are
// required (CI).
func unavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv(RequireVar) == "1" {
		t.Fatalf("%s, and %s=1", why, RequireVar)
	}
	t.Skip(why + "; set " + RequireVar + "=1 to fail instead")
}

// launch starts the server and waits until every listener answers.
func (d *Dovecot) launch() error {
	logged := len(d.Log()) // what an earlier run of the server logged
	d.cmd = exec.Command(d.bin, "-F", "-c", d.conf)
	d.cmd.Stdout, d.cmd.Stderr = os.Stderr, os.Stderr
	// Its own process group, so that stopping it ends every process it
	// forked.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("start dovecot: %w", err)
	}
	return d.waitListening(logged)
}

// Resume starts the stopped server again on the same ports, with the
// same users and mail.
func (d *Dovecot) Resume(t *testing.T) {
	t.Helper()
	if err := d.launch(); err != nil {
		t.Fatalf("%v\n%s", err, d.Log())
	}
}

// waitListening waits for every listener; the log from offset logged on
// is this run's.
func (d *Dovecot) waitListening(logged int) error {
	deadline := time.Now().Add(15 * time.Second)
	for _, addr := range []string{d.IMAPAddr, d.LMTPAddr, d.IMAPSAddr, d.SubmissionAddr, d.SubmissionsAddr} {
		for addr != "" {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			// A master that could not bind says so and exits: no use
			// waiting out the deadline.
			log := d.Log()
			if time.Now().After(deadline) || strings.Contains(log[min(logged, len(log)):], "Fatal:") {
				return fmt.Errorf("dovecot is not listening on %s: %w", addr, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// Log is Dovecot's log so far, for failure messages.
func (d *Dovecot) Log() string {
	b, _ := os.ReadFile(filepath.Join(d.dir, "dovecot.log"))
	return string(b)
}

// Stop ends the server (and every connection to it) at once.
func (d *Dovecot) Stop() {
	if d.cmd == nil || d.cmd.Process == nil || d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	// Dovecot lingers for seconds over its idle children; a test's
	// throwaway server need not shut down gracefully.
	select {
	case <-done:
	case <-time.After(300 * time.Millisecond):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Deliver hands a raw message to Dovecot's LMTP for the recipients, as a
// mail server delivers it.
func (d *Dovecot) Deliver(t *testing.T, from string, to []string, raw []byte) {
	t.Helper()
	if err := d.deliver(from, to, raw); err != nil {
		t.Fatalf("LMTP delivery: %v\n%s", err, d.Log())
	}
}

func (d *Dovecot) deliver(from string, to []string, raw []byte) error {
	before := make(map[string]int, len(to))
	for _, u := range to {
		before[u] = d.uidNext(u)
	}
	conn, err := net.DialTimeout("tcp", d.LMTPAddr, 5*time.Second)
	if err != nil {
		return fmt.Errorf("dial lmtp: %w", err)
	}
	c := smtp.NewClientLMTP(conn)
	defer c.Close()
	if err := c.Hello("localhost"); err != nil {
		return fmt.Errorf("lhlo: %w", err)
	}
	if err := c.SendMail(from, to, bytes.NewReader(raw)); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	if err := c.Quit(); err != nil {
		return err
	}
	d.awaitUIDs(before)
	return nil
}

// uidWait bounds how long a delivery waits for its message's UID.
const uidWait = 5 * time.Second

// awaitUIDs returns once each recipient's mailbox has numbered the
// message just delivered (its next UID passed the one before delivery).
// Maildir messages get their UIDs when a reader syncs the mailbox, in
// directory order, and a sync that finds the mailbox locked by another
// reader may leave them unnumbered: two messages delivered back to back
// could then be numbered out of delivery order, and a test that sends
// several in a row expects them in order. Asking doveadm for the next UID
// syncs. Best effort: without doveadm the reader syncs.
func (d *Dovecot) awaitUIDs(before map[string]int) {
	deadline := time.Now().Add(uidWait)
	for u, prev := range before {
		for prev >= 0 && d.uidNext(u) <= prev && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// uidNext is the UID user's next message will get, after a sync of the
// mailbox; -1 when doveadm cannot tell.
func (d *Dovecot) uidNext(user string) int {
	out, err := exec.Command("doveadm", "-c", d.conf, "mailbox", "status", "-u", user, "uidnext", "INBOX").Output()
	if err != nil {
		return -1
	}
	_, v, _ := strings.Cut(strings.TrimSpace(string(out)), "uidnext=")
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}

// Mailbox is the raw messages in user's INBOX Maildir (new and cur), in
// delivery order.
func (d *Dovecot) Mailbox(t *testing.T, user string) [][]byte {
	t.Helper()
	var out [][]byte
	type file struct{ path string }
	var files []file
	for _, sub := range []string{"new", "cur"} {
		entries, _ := os.ReadDir(filepath.Join(d.dir, "mail", user, sub))
		for _, e := range entries {
			files = append(files, file{filepath.Join(d.dir, "mail", user, sub, e.Name())})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return deliveryOrder(filepath.Base(a.path), filepath.Base(b.path)) })
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// maildirName is Dovecot's Maildir file name: the delivery time in
// seconds and microseconds, neither padded ("1795822825.M99999P26203.host").
var maildirName = regexp.MustCompile(`^(\d+)\.M(\d+)P`)

// deliveryOrder compares two Maildir file names by delivery time; as
// text, a message delivered at .M100000 would come before one delivered
// earlier in the same second at .M99999.
func deliveryOrder(a, b string) int {
	ma, mb := maildirName.FindStringSubmatch(a), maildirName.FindStringSubmatch(b)
	if ma == nil || mb == nil {
		return strings.Compare(a, b)
	}
	for i := 1; i <= 2; i++ {
		x, _ := strconv.ParseInt(ma[i], 10, 64)
		y, _ := strconv.ParseInt(mb[i], 10, 64)
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

// Seen reports whether user's message with the Message-ID carries the
// \Seen flag (Maildir's ":2,...S" suffix).
func (d *Dovecot) Seen(t *testing.T, user, messageID string) bool {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(d.dir, "mail", user, "cur"))
	for _, e := range entries {
		path := filepath.Join(d.dir, "mail", user, "cur", e.Name())
		if headerValue(path, "Message-Id") != messageID {
			continue
		}
		_, flags, _ := strings.Cut(e.Name(), ":2,")
		return strings.Contains(flags, "S")
	}
	return false
}

func headerValue(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			return ""
		}
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// mailOwner is who owns the mail: the test's user, except that Dovecot
// refuses uid 0 for mail, so a root test hands it to Dovecot's own
// internal user and opens dir (and its parent, which t.TempDir makes
// private) to it.
func mailOwner(t *testing.T, dir string) (uid, gid int) {
	t.Helper()
	if os.Getuid() != 0 {
		return os.Getuid(), os.Getgid()
	}
	u, err := user.Lookup("dovecot")
	if err != nil {
		t.Fatalf("running as root needs the dovecot user, which the package creates: %v", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	for _, p := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"mail", "home"} {
		p := filepath.Join(dir, sub)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return uid, gid
}

func write(t *testing.T, path, content string) {
	t.Helper()
	// Dovecot's unprivileged auth process reads the passwd file.
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
