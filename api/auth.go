package api

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Token == "" {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				writeError(w, http.StatusForbidden, "this server has no API token, so it only answers local clients")
				return
			}
		} else {
			got, ok := bearer(r.Header.Get("Authorization"))
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="omega"`)
				writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, orDefault(s.MaxBody, 1<<20))
		next.ServeHTTP(w, r)
	})
}

// bearer returns the token of an Authorization header; the scheme name is
// case-insensitive (RFC 7235).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
