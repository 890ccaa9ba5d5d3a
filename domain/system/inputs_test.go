package system_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain/system"
)

func inputs() system.DecisionInputs {
	return system.DecisionInputs{
		Allowed:          map[string][]string{"telegram": {"1", "2"}, "whatsapp": nil},
		Pairing:          true,
		PairingCodeTTL:   time.Hour,
		PairingMaxCodes:  3,
		OwnerChannel:     "telegram",
		OwnerChat:        "1",
		Timezone:         "Europe/Madrid",
		Classify:         true,
		ModelFast:        "haiku",
		ModelComplex:     "opus",
		HistoryLimit:     20,
		ConversationIdle: 30 * time.Minute,
	}
}

func TestNormalizedCopiesEveryAllowlist(t *testing.T) {
	in := inputs()
	n := in.Normalized()
	want := map[string][]string{"telegram": {"1", "2"}, "whatsapp": {}}
	if !reflect.DeepEqual(n.Allowed, want) {
		t.Fatalf("Allowed = %#v, want %#v", n.Allowed, want)
	}
	n.Allowed["telegram"][0] = "9"
	n.Allowed["email"] = []string{"x"}
	if in.Allowed["telegram"][0] != "1" || len(in.Allowed) != 2 {
		t.Fatalf("changing the normalized inputs changed the original: %#v", in.Allowed)
	}
	if got := (system.DecisionInputs{}).Normalized().Allowed; got == nil || len(got) != 0 {
		t.Fatalf("no allowlists normalize to %#v, want an empty map", got)
	}
}

// The hash is the content address of the normalized JSON: equal
// configurations share a stream however their allowlists were built, and
// any change that alters a decision records new inputs.
func TestHash(t *testing.T) {
	base := inputs()
	sum := func(in system.DecisionInputs) string {
		b, err := json.Marshal(in.Normalized())
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:])[:16]
	}
	if got, want := base.Hash(), sum(base); got != want {
		t.Fatalf("Hash = %q, want the first 16 hex digits of the JSON's SHA-256 %q", got, want)
	}
	same := []struct {
		name string
		a, b system.DecisionInputs
	}{
		{"nil and empty allowlists", system.DecisionInputs{}, system.DecisionInputs{Allowed: map[string][]string{}}},
		{"a nil and an empty list of ids", base, with(base, func(in *system.DecisionInputs) {
			in.Allowed = map[string][]string{"whatsapp": {}, "telegram": {"1", "2"}}
		})},
	}
	for _, c := range same {
		if c.a.Hash() != c.b.Hash() {
			t.Errorf("%s: hashes differ", c.name)
		}
	}
	differ := []struct {
		name   string
		change func(*system.DecisionInputs)
	}{
		{"owner order in the allowlist", func(in *system.DecisionInputs) {
			in.Allowed = map[string][]string{"telegram": {"2", "1"}, "whatsapp": nil}
		}},
		{"a channel closed to pairing", func(in *system.DecisionInputs) { in.Allowed = map[string][]string{"telegram": {"1", "2"}} }},
		{"pairing", func(in *system.DecisionInputs) { in.Pairing = false }},
		{"owner chat", func(in *system.DecisionInputs) { in.OwnerChat = "2" }},
		{"time zone", func(in *system.DecisionInputs) { in.Timezone = "UTC" }},
		{"history limit", func(in *system.DecisionInputs) { in.HistoryLimit = 21 }},
		{"conversation idle", func(in *system.DecisionInputs) { in.ConversationIdle = time.Minute }},
	}
	for _, c := range differ {
		if with(base, c.change).Hash() == base.Hash() {
			t.Errorf("%s: hash unchanged", c.name)
		}
	}
}

func with(in system.DecisionInputs, change func(*system.DecisionInputs)) system.DecisionInputs {
	change(&in)
	return in
}
