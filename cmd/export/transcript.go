package export

import (
	"cmp"
	"slices"
)

// Transcript merges the turns' messages with the notices in time order
// and puts every message in a conversation. A command turn and a notice
// start none of their own: they belong to the conversation they fall in
// (the one before them, else the one after), so a slash command or a
// reminder does not split a conversation. With conversation set, only
// that conversation's messages are kept.
func Transcript(turns, notices []Message, conversation string) []Message {
	all := append(slices.Clone(turns), notices...)
	slices.SortStableFunc(all, func(a, b Message) int { return a.At.Compare(b.At) })
	fillConversations(all)
	if conversation == "" {
		return all
	}
	return slices.DeleteFunc(all, func(m Message) bool { return m.ConversationID != conversation })
}

// fillConversations gives each message without a conversation the one of
// the message before it, and leading ones the first conversation.
func fillConversations(msgs []Message) {
	cur := ""
	for i := range msgs {
		msgs[i].ConversationID = cmp.Or(msgs[i].ConversationID, cur)
		cur = msgs[i].ConversationID
	}
	first := ""
	for _, m := range msgs {
		if first = m.ConversationID; first != "" {
			break
		}
	}
	for i := 0; i < len(msgs) && msgs[i].ConversationID == ""; i++ {
		msgs[i].ConversationID = first
	}
}
