package timeline

import "testing"

// TestParseSeconds: exact nanoseconds from the printed forms, the sign
// kept, and no digit at all an error (before, "", "." and "-" read as 0 s).
func TestParseSeconds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Time
	}{
		{"576.223558", 576_223_558_000}, {"576.223558123", 576_223_558_123}, {"12", 12e9},
		{".25", 250_000_000}, {"-.25", -250_000_000}, {"-1.5", -1_500_000_000}, {"0", 0}, {" 3.000000001 ", 3_000_000_001},
	} {
		got, err := ParseSeconds(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSeconds(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", ".", "-", "-.", "1.2.3", "1.0000000001", "x", "1e9", "9000000001"} {
		if got, err := ParseSeconds(in); err == nil {
			t.Errorf("ParseSeconds(%q) = %d, want an error", in, got)
		}
	}
}
