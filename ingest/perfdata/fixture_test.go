package perfdata

import (
	"bytes"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/perf"
	"github.com/schedlens/schedlens/timeline"
)

// usec truncates a time to the microsecond, as perf script prints it
// (timestamp__scnprintf_usec in tools/perf/util/session.c divides by 1000).
func usec(t timeline.Time) timeline.Time {
	if t == timeline.NoTime {
		return t
	}
	return t / 1000 * 1000
}

// TestFixtureEqualsPerfScript is the oracle test: perf itself printed
// perf-script-fields.txt.gz (-F comm,tid,pid,cpu,time,event,trace) from
// the same perf.data. Event for event, the binary reader must give what the
// text reader gives, but for the time, which the text cuts to microseconds.
func TestFixtureEqualsPerfScript(t *testing.T) {
	bin, rd, err := readData(t, readFixture(t), parse.Options{Name: "perf.data"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := perf.NewReader(bytes.NewReader(readGz(t, fixtureFields)), parse.Options{Name: fixtureFields})
	if err != nil {
		t.Fatal(err)
	}
	txt, err := readAll(t, tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(bin) != len(txt) {
		t.Fatalf("perf.data gave %d events, perf script %d", len(bin), len(txt))
	}
	subUS := 0
	for i := range bin {
		b := bin[i]
		if b.Time%1000 != 0 {
			subUS++
		}
		b.Time, b.Start = usec(b.Time), usec(b.Start)
		if b != txt[i] {
			t.Fatalf("event %d:\n perf.data   %+v\n perf script %+v", i, b, txt[i])
		}
	}
	// The binary is more exact: nearly every time has nanoseconds the text
	// drops.
	if subUS < len(bin)*9/10 {
		t.Errorf("%d of %d times have sub-microsecond digits, want nearly all", subUS, len(bin))
	}
	m, tm := rd.Meta(), tr.Meta()
	if len(m.Unknown) != 1 || m.Unknown["sched_stat_runtime"] != tm.Unknown["sched_stat_runtime"] {
		t.Errorf("Unknown = %v, perf script gives %v", m.Unknown, tm.Unknown)
	}
	if m.Coverage != tm.Coverage || m.CoverageNote != tm.CoverageNote {
		t.Errorf("coverage %v %q, perf script %v %q", m.Coverage, m.CoverageNote, tm.Coverage, tm.CoverageNote)
	}
	// What only the binary gives: the header facts (perf report
	// --header-only on the file, and the fixture's meta.txt and
	// topology.txt taken on the recording machine).
	if m.Format != "perf.data" || m.NCPU != 2 || m.Kernel != "6.18.44-fc-v1045" || m.Clock != "" {
		t.Errorf("Format, NCPU, Kernel, Clock = %q, %d, %q, %q", m.Format, m.NCPU, m.Kernel, m.Clock)
	}
}

// TestFixtureDefaultLayout: the default perf script text has no pid
// column, so it lacks the thread group the binary always has; otherwise the
// events are the same.
func TestFixtureDefaultLayout(t *testing.T) {
	bin, _, err := readData(t, readFixture(t), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := perf.NewReader(bytes.NewReader(readGz(t, fixtureText)), parse.Options{})
	txt, err := readAll(t, tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(bin) != len(txt) {
		t.Fatalf("perf.data gave %d events, perf script %d", len(bin), len(txt))
	}
	withTGID := 0
	for i := range bin {
		b := bin[i]
		b.Time, b.Start = usec(b.Time), usec(b.Start)
		if b.TGID >= 0 {
			withTGID++
		}
		b.TGID = -1
		if b != txt[i] {
			t.Fatalf("event %d:\n perf.data   %+v\n perf script %+v", i, b, txt[i])
		}
	}
	if withTGID < len(bin)*9/10 {
		t.Errorf("%d of %d events have a TGID from perf.data", withTGID, len(bin))
	}
}

// TestShrink: the fuzz seed made from the fixture is a valid perf.data
// whose events are the first ones of the whole file.
func TestShrink(t *testing.T) {
	full, _, err := readData(t, readFixture(t), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	small, r, err := readData(t, shrink(t, readFixture(t), 256<<10), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(small) < 100 || r.Meta().Kernel == "" {
		t.Fatalf("%d events, kernel %q", len(small), r.Meta().Kernel)
	}
	// perf writes each CPU's ring buffer in turn, so a cut keeps a
	// prefix of every CPU's records: each CPU's events are the first ones
	// that CPU has in the whole file, but for the waker's name (OComm),
	// which comes from COMM and FORK records that may be in another
	// CPU's part that was cut.
	perCPU := func(evs []view) map[timeline.CPU][]view {
		m := map[timeline.CPU][]view{}
		for _, e := range evs {
			m[e.CPU] = append(m[e.CPU], e)
		}
		return m
	}
	fm := perCPU(full)
	for cpu, evs := range perCPU(small) {
		for i, e := range evs {
			w := fm[cpu][i]
			e.OComm, w.OComm = "", ""
			if e != w {
				t.Fatalf("CPU %d event %d: %+v, whole file %+v", cpu, i, e, fm[cpu][i])
			}
		}
	}
}
