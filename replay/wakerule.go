package replay

import (
	"encoding/json"
	"fmt"
	"strings"
)

// WakeRule says which task wake ends a sleep that a task wake ended in the
// recording (a Wake of kind WakeTask). Timer, interrupt and outside wakes
// are not concerned.
//
// It is independent of Workload.WakeAfterBlock, which says what becomes of
// a wake that reaches its wakee before the wakee has blocked (the wakee
// goes on without sleeping, or the wake is held until the block): the rule
// picks the sleep a wake ends, WakeAfterBlock what happens when it comes
// early. Extract sets WakeAfterBlock and leaves the rule at WakeRecorded;
// `schedlens replay --wakers` chooses the rule.
type WakeRule uint8

// Wake rules.
const (
	// WakeRecorded: each sleep is ended by the wake the recording shows
	// ending it, when its waker reaches that point of its own work.
	WakeRecorded WakeRule = iota
	// WakeAny: any task wake issued to a task ends its next sleep that a
	// task wake ended in the recording, whichever waker issues it first; a
	// wake issued while no such sleep is open is counted, and the next
	// such sleep ends as soon as it begins. For the reader of a stream many
	// writers feed, which the recorded waker over-constrains.
	WakeAny
	// WakeLateAny: each sleep keeps its recorded waker until it has lasted
	// longer than in the recording (Wake.Slept); from then on the first
	// task wake issued to the sleeper, by any waker, ends it, and the
	// recorded wake, when it comes, goes to the sleeper's next sleep that a
	// task wake ends.
	WakeLateAny
	// WakeOrdered: each task wake stays after its wakee's block, as the
	// recording had them: a waker that reaches a wake before the wakee has
	// blocked leaves its CPU and is woken by that block (at most
	// MaxOrderWait later; then the wake is issued, and held or taken as
	// WakeAfterBlock says), so that neither side of a producer/consumer
	// pair runs ahead of the other.
	WakeOrdered
)

// wakeRuleNames are the rules' names, as `schedlens replay --wakers` and the
// workload JSON ("wake_rule") spell them.
var wakeRuleNames = [...]string{"recorded", "any", "late-any", "ordered"}

func (r WakeRule) String() string {
	if int(r) < len(wakeRuleNames) {
		return wakeRuleNames[r]
	}
	return fmt.Sprintf("WakeRule(%d)", uint8(r))
}

// ParseWakeRule reads a rule name: recorded, any, late-any or ordered.
func ParseWakeRule(s string) (WakeRule, error) {
	for i, n := range wakeRuleNames {
		if n == s {
			return WakeRule(i), nil
		}
	}
	return 0, fmt.Errorf("unknown wake rule %q: want recorded, any, late-any or ordered", s)
}

// MarshalText writes the rule name.
func (r WakeRule) MarshalText() ([]byte, error) {
	if int(r) >= len(wakeRuleNames) {
		return nil, fmt.Errorf("unknown wake rule %d", uint8(r))
	}
	return []byte(wakeRuleNames[r]), nil
}

// UnmarshalText reads a rule name.
func (r *WakeRule) UnmarshalText(b []byte) error {
	v, err := ParseWakeRule(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// UnmarshalJSON reads a Workload. Besides "wake_rule" it accepts the
// boolean fields that named the rules before it ("wake_any_waker",
// "wake_late_any", "wake_ordered"): one at a time, and only where they
// agree with "wake_rule".
func (w *Workload) UnmarshalJSON(b []byte) error {
	type plain Workload
	p := struct {
		plain
		Rule     *WakeRule `json:"wake_rule"` // shadows plain's, so that its absence shows
		AnyWaker bool      `json:"wake_any_waker"`
		LateAny  bool      `json:"wake_late_any"`
		Ordered  bool      `json:"wake_ordered"`
	}{plain: plain(*w)}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	rule := p.WakeRule
	var set []string
	for _, l := range [...]struct {
		on    bool
		field string
		rule  WakeRule
	}{
		{p.AnyWaker, "wake_any_waker", WakeAny},
		{p.LateAny, "wake_late_any", WakeLateAny},
		{p.Ordered, "wake_ordered", WakeOrdered},
	} {
		if l.on {
			set = append(set, l.field)
			rule = l.rule
		}
	}
	switch {
	case len(set) > 1:
		return fmt.Errorf("workload: %s are set together: a workload has one wake rule (\"wake_rule\")", strings.Join(set, " and "))
	case len(set) == 1 && p.Rule != nil && *p.Rule != rule:
		return fmt.Errorf("workload: \"wake_rule\" %q contradicts %s (%q)", p.Rule.String(), set[0], rule.String())
	case p.Rule != nil:
		rule = *p.Rule
	}
	*w = Workload(p.plain)
	w.WakeRule = rule
	return nil
}
