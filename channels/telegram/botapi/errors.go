package botapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	ta "github.com/mymmrac/telego/telegoapi"
)

// RetryAfter reports whether err is Telegram's flood control (429) and
// how long it asks to wait.
func RetryAfter(err error) (time.Duration, bool) {
	var apiErr *ta.Error
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != http.StatusTooManyRequests {
		return 0, false
	}
	wait := time.Second
	if apiErr.Parameters != nil && apiErr.Parameters.RetryAfter > 0 {
		wait = time.Duration(apiErr.Parameters.RetryAfter) * time.Second
	}
	return wait, true
}

// IsEntityError reports whether Telegram rejected a message's HTML.
func IsEntityError(err error) bool {
	var apiErr *ta.Error
	return errors.As(err, &apiErr) && apiErr.ErrorCode == http.StatusBadRequest &&
		strings.Contains(apiErr.Description, "can't parse entities")
}

// DraftsUnavailable reports whether err says this Bot API server or bot
// has no message drafts: an unknown method, or a refusal naming drafts.
func DraftsUnavailable(err error) bool {
	var apiErr *ta.Error
	if !errors.As(err, &apiErr) {
		return false
	}
	desc := strings.ToLower(apiErr.Description)
	switch apiErr.ErrorCode {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		return !IsEntityError(err) && (strings.Contains(desc, "draft") || strings.Contains(desc, "method") ||
			strings.Contains(desc, "not supported") || strings.Contains(desc, "unavailable"))
	}
	return false
}

func badRequestSays(err error, phrases ...string) bool {
	var apiErr *ta.Error
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != http.StatusBadRequest {
		return false
	}
	desc := strings.ToLower(apiErr.Description)
	for _, p := range phrases {
		if strings.Contains(desc, p) {
			return true
		}
	}
	return false
}

// IsNotModified: the edit would change nothing, which is what was wanted.
func IsNotModified(err error) bool { return badRequestSays(err, "message is not modified") }

// IsMessageGone: the message to edit was deleted or can no longer be
// edited.
func IsMessageGone(err error) bool {
	return badRequestSays(err, "message to edit not found", "message_id_invalid", "message can't be edited")
}
