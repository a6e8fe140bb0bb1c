package affinity

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// FuzzParseRules: the parser never panics, accepts only pids above 0,
// non-empty CPU sets and ranges that end after they start, and what it
// accepts reads back the same from its canonical form.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte("# pid cpus\n1234 0-3\n1235: 4,6\n"))
	f.Add([]byte("pid 1236's current affinity list: 0-1\n"))
	f.Add([]byte("7=0-63,128\n\n"))
	f.Add([]byte("hog-c1-0 1 8.25 9.5\nhog 0-3 10\n"))
	f.Add([]byte("12 3-1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := ParseRules(bytes.NewReader(data), "fuzz")
		if err != nil {
			if rules != nil {
				t.Fatalf("error %v with a result", err)
			}
			return
		}
		var b strings.Builder
		for _, r := range rules {
			if (r.PID == timeline.NoTID) == (r.Comm == "") || r.PID == 0 || r.CPUs.Empty() {
				t.Fatalf("rule %+v accepted", r)
			}
			if r.To != timeline.NoTime && r.To <= r.From {
				t.Fatalf("rule %+v: empty range accepted", r)
			}
			who := r.Comm
			if r.PID != timeline.NoTID {
				who = fmt.Sprint(r.PID)
			}
			fmt.Fprintf(&b, "%s %s", who, r.CPUs)
			if r.From != timeline.NoTime {
				b.WriteString(" " + seconds(r.From))
			} else if r.To != timeline.NoTime {
				b.WriteString(" 0")
			}
			if r.To != timeline.NoTime {
				b.WriteString(" " + seconds(r.To))
			}
			b.WriteByte('\n')
		}
		again, err := ParseRules(strings.NewReader(b.String()), "again")
		if err != nil {
			t.Fatalf("canonical form %q: %v", b.String(), err)
		}
		if len(again) != len(rules) {
			t.Fatalf("read back %d rules, want %d", len(again), len(rules))
		}
		for i := range rules {
			x, y := rules[i], again[i]
			if x.PID != y.PID || x.Comm != y.Comm || x.CPUs.String() != y.CPUs.String() || x.To != y.To || (x.From != y.From && !(x.From == timeline.NoTime && y.From == 0)) {
				t.Fatalf("rule %d: read back %+v, want %+v", i, y, x)
			}
		}
	})
}

// seconds writes t as FROM_S and TO_S are written, with its sign (a time
// before the clock's zero is accepted, as --start accepts it).
func seconds(t timeline.Time) string {
	sign := ""
	if t < 0 {
		sign, t = "-", -t
	}
	return fmt.Sprintf("%s%d.%09d", sign, t/1e9, t%1e9)
}
