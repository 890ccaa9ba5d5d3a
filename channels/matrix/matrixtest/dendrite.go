// Package matrixtest runs a real Dendrite homeserver (built by the
// Makefile into bin/) on a loopback port with its own SQLite databases
// under the test's temporary directory, registers users through its
// shared-secret registration API, and drives rooms as those users do.
// A Proxy in front of it stalls or fails on request. Tests import it;
// omega's code never does.
package matrixtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/internal/freeport"
)

// Version is the Dendrite release the Makefile builds.
const Version = "v0.13.8"

// RequireVar, set to 1, turns a missing Dendrite into a failure (CI).
const RequireVar = "OMEGA_TEST_REQUIRE_MATRIX"

// BinVar names a Dendrite binary to use instead of bin/dendrite-<Version>.
const BinVar = "OMEGA_TEST_DENDRITE"

// ServerName is the homeserver's name: users are @name:localhost.
const ServerName = "localhost"

// sharedSecret authorises registrations.
const sharedSecret = "matrixtest-registration-secret"

// Dendrite is a running homeserver.
type Dendrite struct {
	// URL is the client-server API's base URL.
	URL  string
	addr string
	dir  string
	bin  string
	cmd  *exec.Cmd
	exit chan struct{}
	// keeper and keeperRoom, made on the first Stop, are the kit's own
	// account and room for settle's barriers.
	keeper     *User
	keeperRoom string
}

// Start starts Dendrite, or skips the test, saying why, when the binary
// is missing.
func Start(t *testing.T) *Dendrite {
	t.Helper()
	return start(t, freeport.Addr)
}

// start is Start choosing its port with choose.
func start(t *testing.T, choose func(testing.TB) string) *Dendrite {
	t.Helper()
	bin := binary(t)
	dir := t.TempDir()
	d := &Dendrite{dir: dir, bin: bin}
	writeKey(t, filepath.Join(dir, "matrix_key.pem"))
	write(t, filepath.Join(dir, "dendrite.yaml"), config(dir))
	t.Cleanup(d.stop)
	// The port is free when chosen but closed before Dendrite binds it,
	// and another process may take it in between: such a start is
	// retried on a fresh port.
	for attempt := 1; ; attempt++ {
		d.addr = choose(t)
		d.URL = "http://" + d.addr
		err := d.launch()
		if err == nil {
			return d
		}
		if attempt == portAttempts || !strings.Contains(d.logTail(), "address already in use") {
			t.Fatalf("matrixtest: %v:\n%s", err, d.logTail())
		}
		t.Logf("matrixtest: dendrite found its port taken, starting again on a fresh one: %v", err)
		d.stop()
		if err := os.Remove(filepath.Join(d.dir, "dendrite.log")); err != nil {
			t.Fatal(err)
		}
	}
}

// portAttempts bounds the starts on fresh ports when another process
// takes the chosen port first.
const portAttempts = 5

func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(BinVar)
	if bin == "" {
		root, err := moduleRoot()
		if err != nil {
			unavailable(t, err.Error())
		}
		bin = filepath.Join(root, "bin", "dendrite-"+Version)
	}
	if _, err := os.Stat(bin); err != nil {
		unavailable(t, "no Dendrite at "+bin+" (make dendrite builds it)")
	}
	return bin
}

// unavailable skips the test, or fails it where the Matrix tests are
// required (CI).
func unavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv(RequireVar) == "1" {
		t.Fatalf("matrixtest: %s, and %s=1", why, RequireVar)
	}
	t.Skipf("matrixtest: %s; skipping the test against a real Matrix homeserver", why)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// restart runs the binary on its port again and waits until the client
// API answers.
func (d *Dendrite) restart(t *testing.T) {
	t.Helper()
	if err := d.launch(); err != nil {
		t.Fatalf("matrixtest: %v:\n%s", err, d.logTail())
	}
}

func (d *Dendrite) launch() error {
	logf, err := os.OpenFile(filepath.Join(d.dir, "dendrite.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }()
	cmd := exec.Command(d.bin, "-config", filepath.Join(d.dir, "dendrite.yaml"), "-http-bind-address", d.addr, "-https-bind-address", "")
	cmd.Dir, cmd.Stdout, cmd.Stderr = d.dir, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start dendrite: %w", err)
	}
	d.cmd, d.exit = cmd, make(chan struct{})
	go func(exit chan struct{}) { _ = cmd.Wait(); close(exit) }(d.exit)
	// Whatever else holds the port may take a request and never answer.
	probe := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-d.exit:
			d.cmd = nil
			return errors.New("dendrite exited at start")
		default:
		}
		resp, err := probe.Get(d.URL + "/_matrix/client/versions")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("dendrite did not answer within a minute")
}

// Stop stops the server as its operator would, once it has settled
// (SIGTERM, then SIGKILL after 10 s); its databases stay for Restart.
func (d *Dendrite) Stop(t *testing.T) {
	t.Helper()
	if d.cmd == nil {
		return
	}
	d.settle(t)
	d.stop()
}

// settle returns once Dendrite's sync API has stored every event the
// homeserver took before the call. Dendrite answers a send once its room
// server has queued the event for the sync API in JetStream; a SIGTERM
// that catches the sync API writing it aborts the write, and JetStream
// hands the event over again only when its ack wait runs out, half a
// minute after the restart and behind everything sent since. The sync API
// takes that queue in order, one event at a time, so once a barrier in a
// room of the kit's own shows, every earlier event is stored. (Should the
// stop catch the barrier itself unacknowledged, its second delivery finds
// it stored.)
func (d *Dendrite) settle(t *testing.T) {
	t.Helper()
	if d.keeper == nil {
		d.keeper = d.Register(t, "matrixtest")
		d.keeperRoom = d.keeper.CreateRoom(t, false)
	}
	d.keeper.Messages(t, d.keeperRoom, d.keeper.ID)
}

func (d *Dendrite) stop() {
	if d.cmd == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exit:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exit
	}
	d.cmd = nil
}

// Kill kills the server as a crash would.
func (d *Dendrite) Kill() {
	if d.cmd == nil {
		return
	}
	_ = d.cmd.Process.Kill()
	<-d.exit
	d.cmd = nil
}

// Restart starts the server again on the same port and databases.
func (d *Dendrite) Restart(t *testing.T) {
	t.Helper()
	d.Stop(t)
	d.restart(t)
}

func (d *Dendrite) logTail() string {
	data, _ := os.ReadFile(filepath.Join(d.dir, "dendrite.log"))
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// writeKey writes a fresh ed25519 signing key in Dendrite's PEM form.
func writeKey(t *testing.T, path string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var idb [3]byte
	_, _ = rand.Read(idb[:])
	block := &pem.Block{Type: "MATRIX PRIVATE KEY", Headers: map[string]string{"Key-ID": "ed25519:" + hex.EncodeToString(idb[:])}, Bytes: priv.Seed()}
	write(t, path, string(pem.EncodeToMemory(block)))
}

func config(dir string) string {
	db := func(name string) string {
		return "\n  database:\n    connection_string: file:" + filepath.Join(dir, name+".db")
	}
	return strings.Join([]string{
		"version: 2",
		"global:",
		"  server_name: " + ServerName,
		"  private_key: " + filepath.Join(dir, "matrix_key.pem"),
		"  disable_federation: true",
		"  trusted_third_party_id_servers: []",
		"  presence: {enable_inbound: false, enable_outbound: false}",
		"  report_stats: {enabled: false}",
		"  jetstream: {storage_path: " + filepath.Join(dir, "jetstream") + "}",
		"client_api:",
		"  registration_disabled: true",
		"  registration_shared_secret: " + sharedSecret,
		"  rate_limiting: {enabled: false}",
		"federation_api:" + db("federationapi"),
		"  key_perspectives: []",
		"key_server:" + db("keyserver"),
		"media_api:" + db("mediaapi"),
		"  base_path: " + filepath.Join(dir, "media"),
		"mscs:" + db("mscs"),
		"relay_api:" + db("relayapi"),
		"room_server:" + db("roomserver"),
		"sync_api:" + db("syncapi"),
		"  search: {enabled: false}",
		"user_api:",
		"  account_database:",
		"    connection_string: file:" + filepath.Join(dir, "userapi.db"),
		"  bcrypt_cost: 4",
		"logging:",
		"  - type: std",
		"    level: warn",
		"",
	}, "\n")
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
