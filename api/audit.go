package api

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/omega-gateway/omega/api/audit"
	"github.com/omega-gateway/omega/projections/auditlog"
)

// AuditQueries answers audit queries (auditlog.Queries).
type AuditQueries interface {
	Query(ctx context.Context, f auditlog.Filter) (auditlog.Page, error)
	Stats(ctx context.Context, f auditlog.Filter, by string) ([]auditlog.Stats, error)
}

// getAudit answers GET /api/audit with the filters of `omega audit` as
// query parameters, in JSON (an object with rows and next) or CSV (by
// format= or Accept: text/csv; the next page's cursor in the Link header).
// stats=1 [by=day|sender|model] answers the totals instead.
func (s *Server) getAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := audit.ParseFilter(q.Get, time.Now())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	format := auditFormat(r)
	if format == "" {
		writeError(w, http.StatusBadRequest, "format: want json or csv")
		return
	}
	if q.Get("stats") == "1" || q.Get("stats") == "true" {
		stats, err := s.Audit.Stats(r.Context(), f, q.Get("by"))
		if s.auditFailed(w, r, err) {
			return
		}
		if format == audit.JSON {
			writeJSON(w, http.StatusOK, map[string]any{"stats": nonNil(stats)})
			return
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		_ = audit.WriteStats(w, audit.CSV, stats)
		return
	}
	page, err := s.Audit.Query(r.Context(), f)
	if s.auditFailed(w, r, err) {
		return
	}
	if format == audit.JSON {
		page.Rows = nonNil(page.Rows)
		writeJSON(w, http.StatusOK, page)
		return
	}
	if page.Next != "" {
		next := r.URL.Query()
		next.Set("after", page.Next)
		w.Header().Set("Link", `<`+r.URL.Path+"?"+next.Encode()+`>; rel="next"`)
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	_ = audit.WriteRows(w, audit.CSV, page.Rows)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// auditFormat is json or csv, from format= or else Accept; "" when
// format= names neither.
func auditFormat(r *http.Request) string {
	switch f := r.URL.Query().Get("format"); f {
	case audit.JSON, audit.CSV:
		return f
	case "":
	default:
		return ""
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/csv" {
			return audit.CSV
		}
	}
	return audit.JSON
}

// auditFailed answers a failed query: 400 for a bad filter, else 500 with
// the cause logged and not shown.
func (s *Server) auditFailed(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, auditlog.ErrBadFilter):
		writeError(w, http.StatusBadRequest, err.Error())
	default:
		s.Logger.ErrorContext(r.Context(), "audit query failed", "err", err)
		writeError(w, http.StatusInternalServerError, "the audit query failed; see the server log")
	}
	return true
}
