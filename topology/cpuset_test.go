package topology

import "testing"

func TestCPUSet(t *testing.T) {
	s, err := ParseCPUSet("0-3, 8,70")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); got != "0-3,8,70" || s.Count() != 6 || s.First() != 0 || s.Max() != 70 || !s.Has(70) || s.Has(4) {
		t.Errorf("set = %s count %d first %d max %d", got, s.Count(), s.First(), s.Max())
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-x", "99999999"} {
		if _, err := ParseCPUSet(bad); err == nil {
			t.Errorf("ParseCPUSet(%q) succeeded, want an error", bad)
		}
	}
}
