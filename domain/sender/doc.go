// Package sender holds a sender's profile (facts, language, personality, provider sessions, active project) and the references and keys that name a sender.
package sender
