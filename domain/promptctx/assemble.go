package promptctx

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/sanitize"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
)

// Gathered is what a turn's context is assembled from: the message, its
// sender's profile and what was read for it (the pipeline's context step
// gathers it). Assemble needs nothing else, so it is decided without a
// store and replays the same from the same reads.
type Gathered struct {
	TurnID   string
	Received *turn.MessageReceived
	Profile  sender.SenderProfile
	Language string // the reply's language, canonical name
	Now      time.Time
	Location *time.Location
	// Session is the chat's provider session in the sender's active
	// project ("": none to resume).
	Session string
	// ConversationID is the conversation the turn belongs to: the turn's
	// own id when it starts a new one.
	ConversationID string
	History        []turn.HistoryMessage
	Tasks          []Task
	Lessons        []string
	Outcomes       []string
	Summaries      []string
	// Recalled are the older conversations' passages found for a message
	// that asks to recall (see gather).
	Recalled []turn.RecalledPassage
	Projects catalog.Projects
	// Skills lists every skill, "name: description"; MatchedSkills are
	// those the message triggered and MCPServers their servers.
	Skills        []string
	MatchedSkills []SkillText
	MCPServers    []string
	// Prompts, Sandbox and Capabilities are the turn's prompt set: its
	// sections, its sandbox text and what it says this process can do.
	Prompts      map[string]string
	Sandbox      string
	Capabilities []string
	PlatformHint string
	ModelFast    string
	ModelComplex string // a scheduled action's model
}

// ProjectOf is the project a turn's context is set in: a scheduled
// action's task project, else the sender's active one.
func ProjectOf(m *turn.MessageReceived, profile sender.SenderProfile) string {
	if m.Task != nil {
		return m.Task.Project
	}
	return profile.ActiveProject
}

// UserMessage is the message as the model sees it: attachments listed
// first, and marker-shaped text from the user neutralized so that it never
// becomes an instruction to omega, even when the model repeats it. A
// scheduled action's text is omega's own (its description is neutralized
// when written). clean is the sanitized text, what skills match against.
func UserMessage(m *turn.MessageReceived) (message string, clean sanitize.Result) {
	clean = sanitize.Clean(m.Text)
	message = clean.Text
	if m.Task == nil {
		message = markers.Neutralize(message)
	}
	if refs := attachmentLines(m.Attachments); refs != "" {
		message = markers.Neutralize(refs) + "\n" + message
	}
	return message, clean
}

func attachmentLines(as []turn.AttachmentRef) string {
	var lines []string
	for _, a := range as {
		kind := "file"
		if strings.HasPrefix(a.MIME, "image/") {
			kind = "image"
		}
		lines = append(lines, fmt.Sprintf("[Attached %s: %s]", kind, a.Path))
	}
	return strings.Join(lines, "\n")
}

// Assemble builds what the provider is given from what was gathered. The
// conversation, its summaries and the session are the chat's: a group
// turn sees only what was said in that group.
func Assemble(g Gathered) turn.ContextBuilt {
	m := g.Received
	message, clean := UserMessage(m)
	project, session, model := g.Profile.ActiveProject, g.Session, g.ModelFast
	if m.Task != nil {
		// A scheduled action runs in its task's project, with the full
		// system prompt and the complex model.
		project, session, model = m.Task.Project, "", cmp.Or(g.ModelComplex, g.ModelFast)
	}
	newConversation := g.ConversationID == g.TurnID
	if newConversation {
		session = "" // a closed conversation's session is not resumed
	}
	history, turns := neutralizeHistory(g.History)
	out := Build(Input{
		Skills:          g.Skills,
		MatchedSkills:   g.MatchedSkills,
		Prompts:         g.Prompts,
		Sandbox:         g.Sandbox,
		FirstInSession:  session == "",
		Message:         message,
		SenderName:      m.SenderName,
		Language:        g.Language,
		Personality:     g.Profile.Personality,
		ActiveProject:   project,
		ProjectRole:     g.Projects.Role(project),
		Projects:        g.Projects.Names(),
		Now:             g.Now,
		Location:        g.Location,
		PlatformHint:    g.PlatformHint,
		IsGroup:         m.IsGroup,
		Facts:           g.Profile.SortedFacts(),
		History:         turns,
		PendingTasks:    g.Tasks,
		Lessons:         g.Lessons,
		Outcomes:        g.Outcomes,
		Summaries:       g.Summaries,
		Recalled:        g.Recalled,
		NewConversation: newConversation,
	})
	built := turn.ContextBuilt{
		ConversationID:   g.ConversationID,
		Project:          project,
		Language:         g.Language,
		Model:            model,
		SessionID:        session,
		Continuation:     session != "",
		SectionsUsed:     out.SectionsUsed,
		System:           out.System,
		SystemPieces:     out.SystemPieces,
		Prompt:           message,
		Message:          message,
		History:          history,
		FactsCount:       len(g.Profile.Facts),
		SanitizeWarnings: clean.Warnings,
		Skills:           skillNames(g.MatchedSkills),
		MCPServers:       g.MCPServers,
		Capabilities:     g.Capabilities,
		ProjectsVersion:  g.Projects.Version,
		Recalled:         g.Recalled,
	}
	if session != "" {
		built.Prompt, built.PromptPieces, built.SectionsUsed = out.Continuation, out.ContinuationPieces, out.ContinuationSections
	}
	return built
}

// neutralizeHistory neutralizes the user's side of the history (the
// context records it so) and returns it as prompt turns as well.
func neutralizeHistory(history []turn.HistoryMessage) ([]turn.HistoryMessage, []Turn) {
	history = slices.Clone(history)
	turns := make([]Turn, len(history))
	for i, h := range history {
		if h.Role != "assistant" {
			history[i].Text = markers.Neutralize(h.Text)
		}
		turns[i] = Turn{Role: h.Role, Text: history[i].Text}
	}
	return history, turns
}

func skillNames(matched []SkillText) []string {
	out := make([]string, len(matched))
	for i, s := range matched {
		out[i] = s.Name
	}
	return out
}
