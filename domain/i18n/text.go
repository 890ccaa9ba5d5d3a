package i18n

import (
	"fmt"
	"strings"
)

// Key names one localized text. Texts with placeholders take their
// arguments in the order documented on the key.
type Key string

// Status and flow texts.
const (
	StatusFirstNudge   Key = "status.first_nudge"   // sent once after ~15 s without a reply
	StatusStillWorking Key = "status.still_working" // repeated every ~120 s after that
	BusyAck            Key = "busy.ack"             // a message arrived while the sender's turn is running
	AccessDenied       Key = "access.denied"
	// ProviderUnavailable is for a missing or unusable provider configuration,
	// as opposed to one failed call.
	ProviderUnavailable Key = "provider.unavailable"
)

// Friendly provider errors, one per failure class (see ClassifyProviderError).
const (
	ErrRateLimited Key = "provider_error.rate_limited"
	ErrAuth        Key = "provider_error.auth"
	ErrServer      Key = "provider_error.server"
	ErrTimeout     Key = "provider_error.timeout"
	ErrBadRequest  Key = "provider_error.bad_request"
	ErrMalformed   Key = "provider_error.malformed"
	ErrUnknown     Key = "provider_error.unknown"
)

// Attachment and voice notices.
const (
	AttachmentReceived    Key = "attachment.received"    // %s: file name
	AttachmentUnsupported Key = "attachment.unsupported" // %s: kind or MIME type
	AttachmentTooLarge    Key = "attachment.too_large"   // %s: human size limit, e.g. "20 MB"
	VoiceNotConfigured    Key = "voice.not_configured"
)

// Command answers and task confirmations.
const (
	Help                Key = "cmd.help"
	UnknownCommand      Key = "cmd.unknown"           // %s: the command as typed; followed by Help
	TaskScheduled       Key = "task.scheduled"        // %s description, %s due time
	ActionScheduled     Key = "task.action_scheduled" // %s description, %s due time
	TaskCancelled       Key = "task.cancelled"        // %s description
	TaskUpdated         Key = "task.updated"          // %s description
	TaskSimilarExists   Key = "task.similar_exists"   // %s description of the existing task
	TaskNotFound        Key = "task.not_found"        // %s id prefix
	Reminder            Key = "task.reminder"         // %s description, delivered when due
	NoTasks             Key = "task.none"
	LanguageSwitched    Key = "lang.switched"    // %s language name
	LanguageUnsupported Key = "lang.unsupported" // %s requested name, %s supported list
	PersonalitySet      Key = "personality.set"  // %s style
	PersonalityReset    Key = "personality.reset"
	FactsPurged         Key = "facts.purged"
	NoFacts             Key = "facts.none"
	ConversationCleared Key = "conversation.cleared"
	HeartbeatInterval   Key = "heartbeat.interval" // %d minutes
)

// Keys lists every key of the catalogue, in declaration order.
func Keys() []Key {
	return []Key{
		StatusFirstNudge, StatusStillWorking, BusyAck, AccessDenied, ProviderUnavailable,
		ErrRateLimited, ErrAuth, ErrServer, ErrTimeout, ErrBadRequest, ErrMalformed, ErrUnknown,
		AttachmentReceived, AttachmentUnsupported, AttachmentTooLarge, VoiceNotConfigured,
		Help, UnknownCommand, TaskScheduled, ActionScheduled, TaskCancelled, TaskUpdated,
		TaskSimilarExists, TaskNotFound, Reminder, NoTasks, LanguageSwitched, LanguageUnsupported,
		PersonalitySet, PersonalityReset, FactsPurged, NoFacts, ConversationCleared, HeartbeatInterval,
	}
}

// Text returns the text for key in lang, formatted with args. An unknown
// language falls back to English; an unknown key returns the key itself so a
// gap is visible instead of an empty message.
func Text(lang string, key Key, args ...any) string {
	s, ok := lookup(OrDefault(lang), key)
	if !ok {
		return string(key)
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

// Has reports whether lang has its own translation of key (no fallback).
func Has(lang string, key Key) bool {
	l, ok := Normalize(lang)
	if !ok {
		return false
	}
	_, ok = catalogue[l][key]
	return ok
}

func lookup(lang string, key Key) (string, bool) {
	if s, ok := catalogue[lang][key]; ok {
		return s, true
	}
	s, ok := catalogue[Default][key]
	return s, ok
}

// StatusMessages returns the first nudge and the still-working text, the
// pair the turn driver needs for its delayed status updates.
func StatusMessages(lang string) (firstNudge, stillWorking string) {
	return Text(lang, StatusFirstNudge), Text(lang, StatusStillWorking)
}

// ClassifyProviderError maps a raw provider error text to the key of its
// friendly message. The raw text is never shown to the user: it may contain
// request details. Providers that know their error class should pick the key
// directly; this is the fallback for opaque errors (CLI stderr, wrapped
// errors).
func ClassifyProviderError(raw string) Key {
	s := strings.ToLower(raw)
	switch {
	case containsAny(s, "timed out", "timeout", "deadline exceeded"):
		return ErrTimeout
	case containsAny(s, "429", "rate limit", "rate_limit", "too many requests", "overloaded", "quota"):
		return ErrRateLimited
	case containsAny(s, "401", "403", "unauthorized", "forbidden", "invalid api key", "invalid x-api-key",
		"authentication", "not logged in", "permission denied", "login"):
		return ErrAuth
	case containsAny(s, "500", "502", "503", "504", "529", "internal server error", "bad gateway",
		"service unavailable", "server error"):
		return ErrServer
	case containsAny(s, "400", "bad request", "invalid_request", "context length", "too long", "prompt is too long"):
		return ErrBadRequest
	case containsAny(s, "unmarshal", "invalid json", "unexpected end of json", "malformed", "parse", "decode"):
		return ErrMalformed
	default:
		return ErrUnknown
	}
}

// FriendlyProviderError is Text(lang, ClassifyProviderError(raw)).
func FriendlyProviderError(lang, raw string) string {
	return Text(lang, ClassifyProviderError(raw))
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
