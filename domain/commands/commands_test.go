package commands

import "testing"

func TestParse(t *testing.T) {
	const bot = "omega_bot"
	tests := []struct {
		name string
		text string
		bot  string
		want Command
		ok   bool
	}{
		{"help", "/help", bot, Command{Name: Help, Word: "help"}, true},
		{"status", "/status", bot, Command{Name: Status, Word: "status"}, true},
		{"uptime", "/uptime", bot, Command{Name: Uptime, Word: "uptime"}, true},
		{"forget", "/forget", bot, Command{Name: Forget, Word: "forget"}, true},
		{"facts", "/facts", bot, Command{Name: Facts, Word: "facts"}, true},
		{"memory", "/memory", bot, Command{Name: Memory, Word: "memory"}, true},
		{"tasks", "/tasks", bot, Command{Name: Tasks, Word: "tasks"}, true},
		{"cancel with id", "/cancel a1b2c3", bot, Command{Name: Cancel, Arg: "a1b2c3", Word: "cancel"}, true},
		{"cancel without id", "/cancel", bot, Command{Name: Cancel, Word: "cancel"}, true},
		{"language", "/language Spanish", bot, Command{Name: Language, Arg: "Spanish", Word: "language"}, true},
		{"personality multiword", "/personality  warm and  playful ", bot, Command{Name: Personality, Arg: "warm and  playful", Word: "personality"}, true},
		{"purge", "/purge", bot, Command{Name: Purge, Word: "purge"}, true},
		{"projects", "/projects", bot, Command{Name: Projects, Word: "projects"}, true},
		{"project name", "/project omega-trader", bot, Command{Name: Project, Arg: "omega-trader", Word: "project"}, true},
		{"project off", "/project off", bot, Command{Name: Project, Arg: "off", Word: "project"}, true},
		{"heartbeat", "/heartbeat", bot, Command{Name: Heartbeat, Word: "heartbeat"}, true},
		{"learning", "/learning", bot, Command{Name: Learning, Word: "learning"}, true},
		{"skills", "/skills", bot, Command{Name: Skills, Word: "skills"}, true},
		{"whatsapp", "/whatsapp", bot, Command{Name: WhatsApp, Word: "whatsapp"}, true},
		{"upper case", "/HELP", bot, Command{Name: Help, Word: "help"}, true},
		{"surrounding space", "  /tasks \n", bot, Command{Name: Tasks, Word: "tasks"}, true},
		{"arg after newline", "/cancel\na1b2", bot, Command{Name: Cancel, Arg: "a1b2", Word: "cancel"}, true},
		{"addressed to us", "/help@omega_bot", bot, Command{Name: Help, Word: "help"}, true},
		{"addressed to us any case", "/cancel@Omega_Bot a1", bot, Command{Name: Cancel, Arg: "a1", Word: "cancel"}, true},
		{"bot name with at", "/help@omega_bot", "@omega_bot", Command{Name: Help, Word: "help"}, true},
		{"addressed to another bot", "/help@other_bot", bot, Command{}, false},
		{"addressed without bot name", "/help@omega_bot", "", Command{}, false},
		{"empty mention", "/help@", bot, Command{}, false},
		{"unknown word", "/weather Lisbon", bot, Command{Name: Unknown, Arg: "Lisbon", Word: "weather"}, true},
		{"unknown addressed to us", "/start@omega_bot", bot, Command{Name: Unknown, Word: "start"}, true},
		{"prefix of a command", "/hel", bot, Command{Name: Unknown, Word: "hel"}, true},
		{"plain text", "help me", bot, Command{}, false},
		{"slash later", "what does /help do?", bot, Command{}, false},
		{"slash alone", "/", bot, Command{}, false},
		{"slash then space", "/ help", bot, Command{}, false},
		{"path", "/usr/bin is full", bot, Command{}, false},
		{"punctuation", "/help!", bot, Command{}, false},
		{"empty", "", bot, Command{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Parse(tc.text, tc.bot)
			if ok != tc.ok || got != tc.want {
				t.Errorf("Parse(%q, %q) = %+v, %v; want %+v, %v", tc.text, tc.bot, got, ok, tc.want, tc.ok)
			}
		})
	}
}
