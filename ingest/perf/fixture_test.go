package perf

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// checkMonotonic fails if an accepted event's time is below the previous
// one's on the same CPU (KindLost included: it carries the next event's time).
func checkMonotonic(t *testing.T, evs []view) {
	t.Helper()
	last := map[timeline.CPU]timeline.Time{}
	for i, e := range evs {
		if l, ok := last[e.CPU]; ok && e.Time < l {
			t.Fatalf("event %d (%v): time %d before CPU %d's previous %d", i, e, e.Time, e.CPU, l)
		}
		last[e.CPU] = e.Time
	}
}

// TestFixtures reads both perf script layouts of the perf-hackbench-cyclictest
// capture whole. The per-kind counts were taken with awk over the event
// name column; the two layouts must give the same events but for TGID.
func TestFixtures(t *testing.T) {
	wantKinds := map[timeline.Kind]int{
		timeline.KindSwitch:    17165,
		timeline.KindWaking:    11782,
		timeline.KindMigrate:   466,
		timeline.KindFork:      99,
		timeline.KindWakeupNew: 99,
	}
	read := func(path string) ([]view, *Reader) {
		data := readGz(t, path)
		evs, r, err := readAll(t, data, parse.Options{Name: path})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		m := r.Meta()
		if got := kindCounts(evs); !equalCounts(got, wantKinds) {
			t.Errorf("%s: kinds = %v, want %v", path, got, wantKinds)
		}
		if len(m.Unknown) != 1 || m.Unknown["sched_stat_runtime"] != 24739 {
			t.Errorf("%s: Unknown = %v, want sched_stat_runtime: 24739", path, m.Unknown)
		}
		if m.Skipped != 0 || m.NCPU != 2 || m.Format != "perf-script" {
			t.Errorf("%s: Skipped, NCPU, Format = %d, %d, %q; want 0, 2, perf-script", path, m.Skipped, m.NCPU, m.Format)
		}
		if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "inferred") {
			t.Errorf("%s: Warnings = %q, want the inferred-NCPU note", path, m.Warnings)
		}
		checkMonotonic(t, evs)
		return evs, r
	}
	def, rd := read(fixtureDefault)
	fld, rf := read(fixtureFields)
	if len(def) != len(fld) {
		t.Fatalf("default layout gave %d events, fields layout %d", len(def), len(fld))
	}
	for i := range def {
		d, f := def[i], fld[i]
		if d.TGID != -1 {
			t.Fatalf("default event %d: TGID = %d, want -1 (no pid column)", i, d.TGID)
		}
		if f.TGID < 0 {
			t.Fatalf("fields event %d (%v): TGID = %d, want the pid column", i, f, f.TGID)
		}
		f.TGID = -1
		if d != f {
			t.Fatalf("event %d differs but for TGID:\ndefault %v\nfields  %v", i, d, f)
		}
	}
	// Both readers interned the same comms.
	if rd.Strings().Len() != rf.Strings().Len() {
		t.Errorf("interned %d strings from default, %d from fields", rd.Strings().Len(), rf.Strings().Len())
	}
	// Spot-check the first event, the one doc.go shows.
	first := with(base(timeline.KindWaking, 0, 590907234000), func(v *view) {
		v.Task, v.Comm, v.Prio, v.Arg, v.Other, v.OComm = 18, "migration/0", 0, 0, 13341, "perf"
	})
	if def[0] != first {
		t.Errorf("first event:\ngot  %v\nwant %v", def[0], first)
	}
}

func equalCounts(a, b map[timeline.Kind]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestVariants reads the same small capture (testdata/README.md) printed
// with other perf script options and compares with the default layout,
// after normalizing what each option legitimately changes.
func TestVariants(t *testing.T) {
	ref, rr, err := readAll(t, readGz(t, "testdata/allevents.txt.gz"), parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantKinds := map[timeline.Kind]int{
		timeline.KindIdle: 324, timeline.KindMigrate: 62, timeline.KindExec: 49, timeline.KindExit: 50,
		timeline.KindFork: 56, timeline.KindFree: 36, timeline.KindSwitch: 557, timeline.KindWakeup: 169,
		timeline.KindWakeupNew: 56, timeline.KindWaking: 197, timeline.KindNewTask: 56, timeline.KindRename: 50,
	}
	if got := kindCounts(ref); !equalCounts(got, wantKinds) {
		t.Errorf("allevents kinds = %v, want %v", got, wantKinds)
	}
	if len(rr.Meta().Unknown) != 0 {
		t.Errorf("allevents Unknown = %v, want none", rr.Meta().Unknown)
	}
	checkMonotonic(t, ref)

	headerComm := func(k timeline.Kind) bool {
		return k == timeline.KindWaking || k == timeline.KindWakeup || k == timeline.KindWakeupNew || k == timeline.KindExec
	}
	noTGID := func(v view) view { v.TGID = -1; return v }
	tests := []struct {
		file      string
		normalize func(v view) view // applied to both sides
		warn      string            // a Meta.Warnings entry wanted besides the NCPU note
	}{
		{"allevents-header.txt.gz", nil, ""},
		{"allevents-period-misc.txt.gz", nil, ""},
		{"allevents-ns-pidtid-ip.txt.gz", func(v view) view {
			v = noTGID(v)
			v.Time -= v.Time % 1000
			return v
		}, ""},
		{"allevents-latency.txt.gz", func(v view) view {
			v = noTGID(v)
			// -L cuts the header comm to 8 columns.
			if v.Kind == timeline.KindExec {
				v.Comm = cut8(v.Comm)
			} else if headerComm(v.Kind) {
				v.OComm = cut8(v.OComm)
			}
			return v
		}, "cut to 8"},
		{"allevents-nocomm.txt.gz", func(v view) view {
			// Without the comm column the waker's comm is unknown; exec
			// falls back to the file name.
			if headerComm(v.Kind) && v.Kind != timeline.KindExec {
				v.OComm = ""
			}
			return v
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, r, err := readAll(t, readGz(t, "testdata/"+tc.file), parse.Options{Name: tc.file})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(ref) {
				t.Fatalf("got %d events, want %d", len(got), len(ref))
			}
			norm := tc.normalize
			if norm == nil {
				norm = func(v view) view { return v }
			}
			for i := range got {
				g, w := norm(got[i]), norm(ref[i])
				if g != w {
					t.Fatalf("event %d:\ngot  %v\nwant %v", i, g, w)
				}
			}
			if tc.warn != "" && !strings.Contains(strings.Join(r.Meta().Warnings, "\n"), tc.warn) {
				t.Errorf("Warnings = %q, want one containing %q", r.Meta().Warnings, tc.warn)
			}
			if r.Meta().NCPU != 2 {
				t.Errorf("NCPU = %d, want 2", r.Meta().NCPU)
			}
		})
	}

	t.Run("allevents-nocpu.txt.gz", func(t *testing.T) {
		got, _, err := readAll(t, readGz(t, "testdata/allevents-nocpu.txt.gz"), parse.Options{Name: "nocpu"})
		var pe *parse.ParseError
		if !errors.As(err, &pe) || pe.Line != 1 || !errors.Is(err, parse.ErrBadField) || !strings.Contains(pe.Msg, "cpu field required") {
			t.Fatalf("error = %v, want nocpu:1 cpu field required (ErrBadField)", err)
		}
		if len(got) != 0 {
			t.Errorf("got %d events before the error, want 0", len(got))
		}
	})
}

// cut8 is what perf's "%8.8s" leaves of a comm, as the Reader reads it back.
func cut8(s string) string {
	if len(s) > 8 {
		s = s[:8]
	}
	return strings.TrimSpace(s)
}

// TestLostFixture reads a real capture whose 1-page ring buffers lost
// records, printed with --show-lost-events.
func TestLostFixture(t *testing.T) {
	data := readGz(t, "testdata/lost.txt.gz")
	evs, r, err := readAll(t, data, parse.Options{Name: "lost.txt"})
	if err != nil {
		t.Fatal(err)
	}
	wantKinds := map[timeline.Kind]int{
		timeline.KindSwitch: 1374, timeline.KindWakeup: 1024, timeline.KindWaking: 1026,
		timeline.KindMigrate: 70, timeline.KindLost: 31,
	}
	if got := kindCounts(evs); !equalCounts(got, wantKinds) {
		t.Errorf("kinds = %v, want %v", got, wantKinds)
	}
	if n := bytes.Count(data, []byte("PERF_RECORD_LOST lost ")); n != 31 {
		t.Fatalf("fixture has %d lost lines, want 31", n)
	}
	var sum int64
	for i, e := range evs {
		if e.Kind != timeline.KindLost {
			continue
		}
		sum += e.Arg
		if e.Start != timeline.NoTime && e.Start > e.Time {
			t.Errorf("lost %d: Start %d after Time %d", i, e.Start, e.Time)
		}
		if i+1 < len(evs) {
			n := evs[i+1]
			if n.Kind == timeline.KindLost || n.CPU != e.CPU || n.Time != e.Time {
				t.Errorf("lost %d (%v) is not followed by an event of its CPU at its time: %v", i, e, n)
			}
		}
	}
	if sum != 1848 {
		t.Errorf("lost total = %d, want 1848", sum)
	}
	checkMonotonic(t, evs)
	if r.Meta().NCPU != 2 {
		t.Errorf("NCPU = %d, want 2", r.Meta().NCPU)
	}
}
