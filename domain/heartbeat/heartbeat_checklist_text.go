package heartbeat

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// HeartbeatSectionName is the name of a "## NAME — description" header:
// the text before an em-dash, trimmed; "" for a line that is no header.
func HeartbeatSectionName(line string) string {
	l := strings.TrimSpace(line)
	if !strings.HasPrefix(l, "## ") {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimSpace(l[3:]), " — ")
	return strings.TrimSpace(name)
}

// normalizeSection compares section and project names: case-insensitive,
// hyphens and underscores as spaces.
func normalizeSection(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("-", " ", "_", " ").Replace(strings.ToLower(s))), " ")
}

// HeartbeatChecklist is what a cycle checks: items minus those in
// suppressed sections and in sections named like excluded (projects that
// run their own heartbeat). A section is its header line up to the next
// header; items before the first header belong to no section. Returned
// are the surviving lines (headers kept while they have items) and the
// number of real items among them.
func HeartbeatChecklist(items, suppressed, excluded []string) (lines []string, count int) {
	drop := map[string]bool{}
	for _, s := range append(slices.Clone(suppressed), excluded...) {
		drop[normalizeSection(s)] = true
	}
	skipping := false
	var header string
	for _, it := range items {
		if name := HeartbeatSectionName(it); name != "" {
			skipping, header = drop[normalizeSection(name)], it
			continue
		}
		if skipping || strings.TrimSpace(it) == "" {
			continue
		}
		if header != "" {
			lines, header = append(lines, header), ""
		}
		lines = append(lines, it)
		if !strings.HasPrefix(strings.TrimSpace(it), "#") {
			count++
		}
	}
	if count == 0 {
		return nil, 0
	}
	return lines, count
}

// --- grouping ---

// ErrHeartbeatGroups is a classification that cannot be used.
var ErrHeartbeatGroups = errors.New("unusable heartbeat classification")

// ParseHeartbeatGroups reads the classifier's reply for the numbered items
// (1-based): "DIRECT", or one group per line "<name>: 1, 3, 4". Items no
// group names are gathered in a last group; a number out of range, or a
// reply with no group, is an error (the caller falls back to one call).
func ParseHeartbeatGroups(reply string, items []string) ([]HeartbeatGroup, error) {
	if strings.EqualFold(strings.Trim(strings.TrimSpace(reply), "*`. "), "DIRECT") {
		return []HeartbeatGroup{{Name: "all", Items: items}}, nil
	}
	seen := map[int]bool{}
	var groups []HeartbeatGroup
	for _, line := range strings.Split(reply, "\n") {
		name, list, ok := strings.Cut(strings.Trim(strings.TrimSpace(line), "-*` "), ":")
		if !ok || strings.TrimSpace(list) == "" {
			continue
		}
		g := HeartbeatGroup{Name: strings.Trim(strings.TrimSpace(name), "*`")}
		var err error
		if g.Items, err = claimGroupItems(list, items, seen); err != nil {
			return nil, err
		}
		if len(g.Items) > 0 {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("%w: no group in %q", ErrHeartbeatGroups, reply)
	}
	if rest := unclaimedItems(items, seen); len(rest) > 0 {
		groups = append(groups, HeartbeatGroup{Name: "other", Items: rest})
	}
	return groups, nil
}

// claimGroupItems returns the items a group line's list numbers (1-based)
// that no earlier group claimed, and marks them seen; words that are not
// numbers are skipped, a number out of range is an error.
func claimGroupItems(list string, items []string, seen map[int]bool) ([]string, error) {
	var claimed []string
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(strings.Trim(f, "#."))
		if err != nil {
			continue
		}
		if n < 1 || n > len(items) {
			return nil, fmt.Errorf("%w: item %d of %d", ErrHeartbeatGroups, n, len(items))
		}
		if !seen[n] {
			seen[n] = true
			claimed = append(claimed, items[n-1])
		}
	}
	return claimed, nil
}

// unclaimedItems are the items no group named, in order.
func unclaimedItems(items []string, seen map[int]bool) []string {
	var rest []string
	for i, it := range items {
		if !seen[i+1] {
			rest = append(rest, it)
		}
	}
	return rest
}

// HeartbeatOK says whether a group's reply (markers already stripped) has
// nothing for the user once markdown and the HEARTBEAT_OK token are gone,
// and returns the text to send otherwise.
func HeartbeatOK(text string) (bool, string) {
	clean := strings.ReplaceAll(text, "HEARTBEAT_OK", "")
	bare := strings.Trim(strings.NewReplacer("*", "", "_", "", "`", "", "#", "", ">", "").Replace(clean), " \t\r\n.")
	if bare == "" {
		return true, ""
	}
	return false, strings.TrimSpace(clean)
}
