// Package commands recognises the slash commands a user can send (/help,
// /tasks, /cancel <id>, ...). Commands are answered by the gateway itself,
// without calling a provider.
package commands

import (
	"strings"
	"unicode"
)

// Command names. Unknown is any other /word: the caller answers it with
// help rather than passing it to a provider.
const (
	Help        = "help"
	Status      = "status"
	Uptime      = "uptime"
	Usage       = "usage" // what the sender and everything spent, and what is left
	Forget      = "forget"
	Facts       = "facts"
	Memory      = "memory"
	Search      = "search" // full-text search of the chat's earlier conversations
	Tasks       = "tasks"
	Cancel      = "cancel"
	Language    = "language"
	Personality = "personality"
	Purge       = "purge"
	Projects    = "projects"
	Project     = "project"
	Heartbeat   = "heartbeat"
	Learning    = "learning"
	Skills      = "skills"
	WhatsApp    = "whatsapp"
	Pair        = "pair" // owner: approve or reject an unknown sender's pairing code
	Link        = "link" // owner: link one person's identities across channels
	Build       = "build"
	Unknown     = "unknown"
)

// Command is a parsed slash command. Arg is the trimmed text after the
// command word ("" when absent): the id prefix of /cancel, the language of
// /language, the style of /personality, the project name or "off" of
// /project. Commands that take no argument ignore it. Word is the command
// word as typed, lower-cased, which callers can quote in the help reply
// to an Unknown command.
type Command struct {
	Name string
	Arg  string
	Word string
}

// Parse recognises text as a command addressed to this bot.
//
// A command is a '/' followed by a word of ASCII letters, digits and '_'
// (Telegram's rule), matched case-insensitively, optionally suffixed with
// "@botname". "/cmd@otherbot" is addressed to another bot in a group and
// is not ours; when botName is "" (channels without bot names) any
// "@name" suffix is treated the same way. Text not starting with '/', or
// whose first word is not a command word (such as "/usr/bin is full"), is
// not a command.
func Parse(text, botName string) (Command, bool) {
	text = strings.TrimSpace(text)
	rest, ok := strings.CutPrefix(text, "/")
	if !ok {
		return Command{}, false
	}
	head, arg := splitFirstWord(rest)
	word, mention, addressed := strings.Cut(head, "@")
	if addressed && !sameBot(mention, botName) {
		return Command{}, false
	}
	if !isCommandWord(word) {
		return Command{}, false
	}
	word = strings.ToLower(word)
	cmd := Command{Name: Unknown, Arg: arg, Word: word}
	if known(word) {
		cmd.Name = word
	}
	return cmd, true
}

func splitFirstWord(s string) (word, rest string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

func sameBot(mention, botName string) bool {
	botName = strings.TrimPrefix(botName, "@")
	return botName != "" && strings.EqualFold(mention, botName)
}

func isCommandWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c != '_' && (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

func known(word string) bool {
	switch word {
	case Help, Status, Uptime, Usage, Forget, Facts, Memory, Tasks, Cancel, Language,
		Personality, Purge, Projects, Project, Heartbeat, Learning, Skills, WhatsApp, Pair, Link, Search, Build:
		return true
	}
	return false
}
