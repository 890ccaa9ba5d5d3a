package markers

import "time"

// Marker is one protocol instruction extracted from a provider reply.
// Callers type-switch on the concrete type; Name is the protocol name,
// suitable for events and logs.
type Marker interface {
	Name() string
}

// Protocol names, exactly as the provider must write them. They are
// case-sensitive: the system prompt tells the model to use the literal
// English names whatever the conversation language.
const (
	NameSchedule                   = "SCHEDULE"
	NameScheduleAction             = "SCHEDULE_ACTION"
	NameCancelTask                 = "CANCEL_TASK"
	NameUpdateTask                 = "UPDATE_TASK"
	NameLangSwitch                 = "LANG_SWITCH"
	NamePersonality                = "PERSONALITY"
	NameForgetConversation         = "FORGET_CONVERSATION"
	NamePurgeFacts                 = "PURGE_FACTS"
	NameProjectActivate            = "PROJECT_ACTIVATE"
	NameProjectDeactivate          = "PROJECT_DEACTIVATE"
	NameWhatsAppQR                 = "WHATSAPP_QR"
	NameHeartbeatAdd               = "HEARTBEAT_ADD"
	NameHeartbeatRemove            = "HEARTBEAT_REMOVE"
	NameHeartbeatInterval          = "HEARTBEAT_INTERVAL"
	NameHeartbeatSuppressSection   = "HEARTBEAT_SUPPRESS_SECTION"
	NameHeartbeatUnsuppressSection = "HEARTBEAT_UNSUPPRESS_SECTION"
	NameHeartbeatOK                = "HEARTBEAT_OK"
	NameLimitation                 = "LIMITATION"
	NameSelfHeal                   = "SELF_HEAL"
	NameSelfHealResolved           = "SELF_HEAL_RESOLVED"
	NameBugReport                  = "BUG_REPORT"
	NameSkillImprove               = "SKILL_IMPROVE"
	NameActionOutcome              = "ACTION_OUTCOME"
	NameReward                     = "REWARD"
	NameLesson                     = "LESSON"
	NameSilent                     = "SILENT"
	NameBuildProposal              = "BUILD_PROPOSAL"
)

// Repeat is how often a scheduled task recurs.
type Repeat string

const (
	RepeatOnce     Repeat = "once"
	RepeatDaily    Repeat = "daily"
	RepeatWeekly   Repeat = "weekly"
	RepeatMonthly  Repeat = "monthly"
	RepeatWeekdays Repeat = "weekdays"
)

// Schedule is SCHEDULE: (a reminder) or, with Action set, SCHEDULE_ACTION:
// (a task the agent executes itself when due).
type Schedule struct {
	Description string
	Due         time.Time
	Repeat      Repeat
	Action      bool
}

func (s Schedule) Name() string {
	if s.Action {
		return NameScheduleAction
	}
	return NameSchedule
}

// CancelTask is CANCEL_TASK: <id prefix>.
type CancelTask struct{ IDPrefix string }

func (CancelTask) Name() string { return NameCancelTask }

// UpdateTask is UPDATE_TASK: id | description | due | repeat. An empty
// field means "leave unchanged": Description "", a zero Due, Repeat "".
type UpdateTask struct {
	IDPrefix    string
	Description string
	Due         time.Time
	Repeat      Repeat
}

func (UpdateTask) Name() string { return NameUpdateTask }

// LangSwitch is LANG_SWITCH: <language>.
type LangSwitch struct{ Language string }

func (LangSwitch) Name() string { return NameLangSwitch }

// Personality is PERSONALITY: <style>.
type Personality struct{ Style string }

func (Personality) Name() string { return NamePersonality }

// ForgetConversation is the bare FORGET_CONVERSATION marker.
type ForgetConversation struct{}

func (ForgetConversation) Name() string { return NameForgetConversation }

// PurgeFacts is the bare PURGE_FACTS marker.
type PurgeFacts struct{}

func (PurgeFacts) Name() string { return NamePurgeFacts }

// ProjectActivate is PROJECT_ACTIVATE: <project name>.
type ProjectActivate struct{ Project string }

func (ProjectActivate) Name() string { return NameProjectActivate }

// ProjectDeactivate is the bare PROJECT_DEACTIVATE marker.
type ProjectDeactivate struct{}

func (ProjectDeactivate) Name() string { return NameProjectDeactivate }

// WhatsAppQR is the bare WHATSAPP_QR marker.
type WhatsAppQR struct{}

func (WhatsAppQR) Name() string { return NameWhatsAppQR }

// HeartbeatAdd is HEARTBEAT_ADD: <checklist item>.
type HeartbeatAdd struct{ Item string }

func (HeartbeatAdd) Name() string { return NameHeartbeatAdd }

// HeartbeatRemove is HEARTBEAT_REMOVE: <keyword>; the heartbeat removes
// items matching it case-insensitively.
type HeartbeatRemove struct{ Item string }

func (HeartbeatRemove) Name() string { return NameHeartbeatRemove }

// HeartbeatInterval is HEARTBEAT_INTERVAL: <minutes>, 1 to 1440.
type HeartbeatInterval struct{ Minutes int }

func (HeartbeatInterval) Name() string { return NameHeartbeatInterval }

// HeartbeatSuppressSection is HEARTBEAT_SUPPRESS_SECTION: <section>.
type HeartbeatSuppressSection struct{ Section string }

func (HeartbeatSuppressSection) Name() string { return NameHeartbeatSuppressSection }

// HeartbeatUnsuppressSection is HEARTBEAT_UNSUPPRESS_SECTION: <section>.
type HeartbeatUnsuppressSection struct{ Section string }

func (HeartbeatUnsuppressSection) Name() string { return NameHeartbeatUnsuppressSection }

// HeartbeatOK is the bare HEARTBEAT_OK marker: nothing needs attention.
type HeartbeatOK struct{}

func (HeartbeatOK) Name() string { return NameHeartbeatOK }

// Limitation is LIMITATION: title | description | proposed plan. The plan
// is optional.
type Limitation struct {
	Title       string
	Description string
	Plan        string
}

func (Limitation) Name() string { return NameLimitation }

// SelfHeal is SELF_HEAL: description | verification test.
type SelfHeal struct {
	Description  string
	Verification string
}

func (SelfHeal) Name() string { return NameSelfHeal }

// SelfHealResolved is the bare SELF_HEAL_RESOLVED marker.
type SelfHealResolved struct{}

func (SelfHealResolved) Name() string { return NameSelfHealResolved }

// BugReport is BUG_REPORT: <description>.
type BugReport struct{ Description string }

func (BugReport) Name() string { return NameBugReport }

// SkillImprove is SKILL_IMPROVE: skill | lesson.
type SkillImprove struct {
	Skill  string
	Lesson string
}

func (SkillImprove) Name() string { return NameSkillImprove }

// ActionOutcome is ACTION_OUTCOME: <outcome>, emitted by action tasks.
type ActionOutcome struct{ Outcome string }

func (ActionOutcome) Name() string { return NameActionOutcome }

// Reward is REWARD: score | domain | lesson, score one of -1, 0, +1.
type Reward struct {
	Score  int
	Domain string
	Lesson string
}

func (Reward) Name() string { return NameReward }

// Lesson is LESSON: domain | rule.
type Lesson struct {
	Domain string
	Rule   string
}

func (Lesson) Name() string { return NameLesson }

// Silent is a reply line consisting only of SILENT: the provider chose not
// to answer (group chats).
type Silent struct{}

func (Silent) Name() string { return NameSilent }

// BuildProposal is BUILD_PROPOSAL: what to build. The person is asked to
// confirm before a build starts.
type BuildProposal struct {
	Request string
}

func (BuildProposal) Name() string { return NameBuildProposal }
