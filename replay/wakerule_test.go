package replay

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWakeRuleNames: the rules are spelled as `schedlens replay --wakers`
// and docs/replay.md spell them, both ways; anything else is refused.
func TestWakeRuleNames(t *testing.T) {
	for _, tc := range []struct {
		rule WakeRule
		name string
	}{
		{WakeRecorded, "recorded"},
		{WakeAny, "any"},
		{WakeLateAny, "late-any"},
		{WakeOrdered, "ordered"},
	} {
		if got := tc.rule.String(); got != tc.name {
			t.Errorf("WakeRule(%d).String() = %q, want %q", uint8(tc.rule), got, tc.name)
		}
		got, err := ParseWakeRule(tc.name)
		if err != nil || got != tc.rule {
			t.Errorf("ParseWakeRule(%q) = %v, %v; want %v", tc.name, got, err, tc.rule)
		}
	}
	for _, bad := range []string{"", "Any", "late_any", "any-waker", "recorded "} {
		if r, err := ParseWakeRule(bad); err == nil {
			t.Errorf("ParseWakeRule(%q) = %v, want an error", bad, r)
		} else if !strings.Contains(err.Error(), "want recorded, any, late-any or ordered") {
			t.Errorf("ParseWakeRule(%q): error %q does not list the rules", bad, err)
		}
	}
	if got := WakeRule(4).String(); got != "WakeRule(4)" {
		t.Errorf("WakeRule(4).String() = %q", got)
	}
	if _, err := WakeRule(4).MarshalText(); err == nil {
		t.Error("WakeRule(4) marshals")
	}
	w := Workload{WakeRule: 4, Tasks: []Task{{Comm: "a", CPU: -1, Segments: []Segment{{Work: 1}}}}}
	if err := w.Validate(0); err == nil || !strings.Contains(err.Error(), "wake rule 4") {
		t.Errorf("Validate of wake rule 4: %v, want an unknown-rule error", err)
	}
}

// TestWakeRuleJSON: the rule is written as "wake_rule" by name, left out
// when it is the recorded one, and read back.
func TestWakeRuleJSON(t *testing.T) {
	for _, tc := range []struct {
		rule WakeRule
		want string // in the JSON; "" for no wake_rule at all
	}{
		{WakeRecorded, ""},
		{WakeAny, `"wake_rule":"any"`},
		{WakeLateAny, `"wake_rule":"late-any"`},
		{WakeOrdered, `"wake_rule":"ordered"`},
	} {
		b, err := json.Marshal(&Workload{WakeAfterBlock: true, WakeRule: tc.rule})
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if tc.want == "" && strings.Contains(s, "wake_rule") || tc.want != "" && !strings.Contains(s, tc.want) {
			t.Errorf("%v: %s, want %q", tc.rule, s, tc.want)
		}
		var back Workload
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%v: %v", tc.rule, err)
		}
		if back.WakeRule != tc.rule || !back.WakeAfterBlock {
			t.Errorf("%v: read back %v, wake_after_block %v", tc.rule, back.WakeRule, back.WakeAfterBlock)
		}
	}
}

// TestWakeRuleLegacyJSON: workloads written before "wake_rule" named the
// rule with one boolean each; they still read, one at a time and only
// where they agree with "wake_rule".
func TestWakeRuleLegacyJSON(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    WakeRule
		wantErr string
	}{
		{`{}`, WakeRecorded, ""},
		{`{"wake_any_waker":true}`, WakeAny, ""},
		{`{"wake_late_any":true}`, WakeLateAny, ""},
		{`{"wake_ordered":true}`, WakeOrdered, ""},
		{`{"wake_any_waker":false,"wake_ordered":false}`, WakeRecorded, ""},
		{`{"wake_rule":"ordered","wake_ordered":true}`, WakeOrdered, ""},
		{`{"wake_rule":"late-any","wake_any_waker":false}`, WakeLateAny, ""},
		{`{"wake_rule":"recorded","wake_any_waker":true}`, 0, `"wake_rule" "recorded" contradicts wake_any_waker ("any")`},
		{`{"wake_any_waker":true,"wake_ordered":true}`, 0, "wake_any_waker and wake_ordered are set together"},
		{`{"wake_rule":"sideways"}`, 0, `unknown wake rule "sideways"`},
		{`{"wake_rule":2}`, 0, "cannot unmarshal number"},
	} {
		var w Workload
		err := json.Unmarshal([]byte(tc.in), &w)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tc.wantErr == "" && w.WakeRule != tc.want:
			t.Errorf("%s: rule %v, want %v", tc.in, w.WakeRule, tc.want)
		}
	}

	// The rest of the workload reads as before: its tasks with their own
	// defaults (a missing "cpu" is -1), and what the JSON leaves out keeps
	// its value.
	w := Workload{HZ: 300}
	in := `{"name":"old","start_ns":5,"wake_after_block":true,"wake_ordered":true,
		"tasks":[{"tid":7,"comm":"a","prio":120,"segments":[{"wake":{"kind":"start"},"work":10}]}]}`
	if err := json.Unmarshal([]byte(in), &w); err != nil {
		t.Fatal(err)
	}
	if w.Name != "old" || w.Start != 5 || !w.WakeAfterBlock || w.WakeRule != WakeOrdered || w.HZ != 300 {
		t.Errorf("read %+v", w)
	}
	if len(w.Tasks) != 1 || w.Tasks[0].TID != 7 || w.Tasks[0].CPU != -1 || w.Tasks[0].Segments[0].Wake.CPU != -1 {
		t.Errorf("tasks read as %+v", w.Tasks)
	}
}
