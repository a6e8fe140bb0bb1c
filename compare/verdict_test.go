package compare

import "testing"

// TestSeedSummary: seeds are grouped by verdict in the order the verdicts
// first appear, consecutive seeds written as a range.
func TestSeedSummary(t *testing.T) {
	v := func(s string) Verdict { return Verdict{Verdict: s} }
	for _, tc := range []struct {
		seeds  []SeedVerdict
		same   bool
		detail string
	}{
		{nil, true, ""},
		{[]SeedVerdict{{1, v(Faithful)}, {2, v(Faithful)}}, true, "faithful for seeds 1-2"},
		{[]SeedVerdict{{1, v(NotFaithful)}, {2, v(NotFaithful)}, {3, v(PartlyFaithful)}, {4, v(PartlyFaithful)}}, false,
			"not faithful for seeds 1-2, partly faithful for seeds 3-4"},
		{[]SeedVerdict{{5, v(PartlyFaithful)}, {6, v(Faithful)}, {7, v(PartlyFaithful)}, {9, v(PartlyFaithful)}, {8, v(PartlyFaithful)}}, false,
			"partly faithful for seeds 5, 7-9, faithful for seed 6"},
	} {
		same, detail := SeedSummary(tc.seeds)
		if same != tc.same || detail != tc.detail {
			t.Errorf("SeedSummary(%v) = %v, %q; want %v, %q", tc.seeds, same, detail, tc.same, tc.detail)
		}
	}
}
