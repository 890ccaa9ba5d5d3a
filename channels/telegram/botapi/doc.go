// Package botapi holds what the Telegram channel knows of the Bot API's
// limits: the pacing that keeps flood control rare, and the classes of
// its refusals (flood control, rejected HTML, an edit that changes
// nothing or whose message is gone, no message drafts).
package botapi
