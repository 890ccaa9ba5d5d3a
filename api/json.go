package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	intakedom "github.com/omega-gateway/omega/domain/intake"
)

// decode reads exactly one JSON value into v; anything after it, an
// unknown field or an over-long body is refused. It answers the request
// itself and returns false when the body is refused.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, next := dec.Token(); next != io.EOF {
			err = errors.New("unexpected data after the JSON value")
			if next != nil && !isSyntaxError(next) {
				err = next
			}
		}
	}
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit))
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid JSON body: %v", err))
	}
	return false
}

func isSyntaxError(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se)
}

// invalidReason is the client's view of an intake refusal.
func invalidReason(err error) string {
	var ie *intakedom.InvalidMessageError
	if errors.As(err, &ie) {
		if ie.Field == "platform_id" {
			return (&intakedom.InvalidMessageError{Field: "message_id", Reason: ie.Reason}).Error()
		}
		return ie.Error()
	}
	return err.Error()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
