package emailtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"path/filepath"
	"testing"
	"text/template"
	"time"
)

// confTemplate is a Dovecot 2.3 configuration: logins with plaintext
// passwords allowed on loopback, one Maildir per user.
var confTemplate = template.Must(template.New("dovecot.conf").Parse(`base_dir = {{.Dir}}/run
state_dir = {{.Dir}}/state
log_path = {{.Dir}}/dovecot.log
protocols = imap lmtp{{if .Submission}} submission{{end}}
listen = 127.0.0.1
hostname = localhost
postmaster_address = postmaster@localhost
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
first_valid_uid = 0
mail_location = maildir:{{.Dir}}/mail/%u
mailbox_idle_check_interval = 1s
lmtp_save_to_detail_mailbox = no
{{if .NoIdle}}imap_capability = IMAP4rev1 LITERAL+ SASL-IR LOGIN-REFERRALS ID ENABLE SORT UIDPLUS
{{end}}{{if .TLS}}ssl = yes
ssl_cert = <{{.Dir}}/cert.pem
ssl_key = <{{.Dir}}/key.pem
{{else}}ssl = no
{{end}}passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {{.Dir}}/passwd
}
userdb {
  driver = static
  args = uid={{.UID}} gid={{.GID}} home={{.Dir}}/home/%u allow_all_users=yes
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = {{.IMAPPort}}
  }
  inet_listener imaps {
{{if .TLS}}    address = 127.0.0.1
    port = {{.IMAPSPort}}
    ssl = yes
{{else}}    port = 0
{{end}}  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = {{.LMTPPort}}
  }
}
{{if .Submission}}submission_relay_host = 127.0.0.1
submission_relay_port = {{.RelayPort}}
submission_relay_trusted = yes
service submission-login {
  inet_listener submission {
    address = 127.0.0.1
    port = {{.SubmissionPort}}
  }
{{if .TLS}}  inet_listener submissions {
    address = 127.0.0.1
    port = {{.SubmissionsPort}}
    ssl = yes
  }
{{end}}}
{{end}}`))

func (d *Dovecot) config(uid, gid int) string {
	port := func(addr string) string {
		_, p, _ := net.SplitHostPort(addr)
		return p
	}
	var relay string
	if d.Relay != nil {
		relay = port(d.Relay.Addr)
	}
	var b bytes.Buffer
	err := confTemplate.Execute(&b, map[string]any{
		"Dir": d.dir, "UID": uid, "GID": gid, "NoIdle": d.opts.NoIdle, "TLS": d.opts.TLS, "Submission": d.opts.Submission,
		"IMAPPort": port(d.IMAPAddr), "IMAPSPort": port(d.IMAPSAddr), "LMTPPort": port(d.LMTPAddr),
		"SubmissionPort": port(d.SubmissionAddr), "SubmissionsPort": port(d.SubmissionsAddr), "RelayPort": relay,
	})
	if err != nil {
		panic(err) // the template is fixed: a failure is a bug here
	}
	return b.String()
}

// writeCertificate writes a throwaway self-signed certificate for
// localhost and 127.0.0.1 into dir and returns a client configuration
// that trusts it.
func writeCertificate(t *testing.T, dir string) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "cert.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	write(t, filepath.Join(dir, "key.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})))
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
}
