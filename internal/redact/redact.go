// Package redact removes configured secrets from text before it is logged,
// stored or shown. Redaction covers text omega receives too (an error body
// that echoes a request path), not only the URLs omega builds itself.
package redact

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
)

// Mask replaces every secret.
const Mask = "[REDACTED]"

// minLen keeps a very short "secret" from masking ordinary text everywhere.
const minLen = 4

// Redactor masks a fixed set of secrets. The zero value and nil mask nothing.
type Redactor struct {
	r *strings.Replacer
}

// New returns a redactor for the given secrets; empty ones are ignored. Each
// secret is also masked in its URL-escaped forms, and a "<id>:<secret>" token
// (Telegram's) also by its secret half alone.
func New(secrets ...string) *Redactor {
	seen := map[string]bool{}
	var forms []string
	add := func(s string) {
		if len(s) >= minLen && !seen[s] {
			seen[s] = true
			forms = append(forms, s)
		}
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		add(s)
		add(url.PathEscape(s))
		add(url.QueryEscape(s))
		if _, half, ok := strings.Cut(s, ":"); ok && len(half) >= 16 {
			add(half)
		}
	}
	if len(forms) == 0 {
		return &Redactor{}
	}
	// Longest first, so a secret that contains another is masked whole.
	slices.SortFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mask)
	}
	return &Redactor{r: strings.NewReplacer(pairs...)}
}

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Redact returns s with every secret masked and how many were.
func (r *Redactor) Redact(s string) (string, int) {
	masked := r.String(s)
	if masked == s {
		return s, 0
	}
	return masked, strings.Count(masked, Mask) - strings.Count(s, Mask)
}

// Error returns err's text with every secret masked ("" for nil).
func (r *Redactor) Error(err error) string {
	if err == nil {
		return ""
	}
	return r.String(err.Error())
}

// Handler wraps h so that messages and attribute values are masked.
func (r *Redactor) Handler(h slog.Handler) slog.Handler {
	if r == nil || r.r == nil {
		return h
	}
	return &handler{next: h, r: r}
}

type handler struct {
	next slog.Handler
	r    *Redactor
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = h.attr(a)
	}
	return &handler{next: h.next.WithAttrs(masked), r: h.r}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{next: h.next.WithGroup(name), r: h.r}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		masked := make([]any, len(group))
		for i, g := range group {
			masked[i] = h.attr(g)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		// Errors and other values are masked through their text; a value
		// that holds no secret keeps its type for structured output.
		s := v.String()
		if m := h.r.String(s); m != s {
			return slog.String(a.Key, m)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Writer returns a writer that masks secrets in each Write. A secret split
// across two writes is not caught: callers write whole lines.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if r == nil || r.r == nil {
		return w
	}
	return writer{w: w, r: r}
}

type writer struct {
	w io.Writer
	r *Redactor
}

func (w writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, w.r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
