package perfdata

import (
	"bytes"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// TestFastSampleIsDecode: on every sample of the captures, fastSample
// either declines or gives decode's entry and payload, and it takes the
// common ones (all but the first sample of each attribute).
func TestFastSampleIsDecode(t *testing.T) {
	for _, tc := range testCaptures(t) {
		r, err := NewReader(bytes.NewReader(tc.data), parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		samples, fast := 0, 0
		for {
			typ, rec, at, err := r.nextRecord()
			if err != nil {
				break
			}
			switch typ {
			case recHeaderAttr:
				if perr := r.pipeAttr(rec, at); perr != nil {
					t.Fatal(perr)
				}
			case recTracingData:
				if perr := r.pipeTracingData(rec, at); perr != nil {
					t.Fatal(perr)
				}
			}
			if typ != recSample {
				continue
			}
			samples++
			var fe entry
			fp, ok := r.fastSample(rec, at, &fe)
			e, p, dok, perr := r.decode(typ, rec, at)
			if perr != nil || !dok {
				t.Fatalf("%s: sample at %#x: decode: %v, ok %v", tc.name, at, perr, dok)
			}
			if !ok {
				continue
			}
			fast++
			if fe != e || !bytes.Equal(fp, p) || (fp == nil) != (p == nil) {
				t.Fatalf("%s: sample at %#x: fastSample %+v %x, decode %+v %x", tc.name, at, fe, fp, e, p)
			}
		}
		// Each attribute's first sample goes through decode, which
		// makes its spec.
		if samples == 0 || fast < samples-len(r.attrs) {
			t.Errorf("%s: fastSample took %d of %d samples", tc.name, fast, samples)
		}
	}
}

// TestCommCache: ids are Strings' own, of the bytes up to the first NUL,
// whatever the slot holds: the same pid with another comm, two pids
// sharing a slot, a comm too long for a slot, the empty comm, char arrays
// whose bytes after the NUL differ.
func TestCommCache(t *testing.T) {
	strs := timeline.NewStrings()
	c := commCache{strs: strs}
	for i, tc := range []struct {
		pid  timeline.TID
		comm string
	}{
		{1, "hackbench"}, {1, "hackbench"}, {1, "sh"}, {1, "hackbench"},
		{1 + commSlots, "perf"}, {1, "hackbench"}, {1 + commSlots, "perf"},
		{2, "a-name-longer-than-16"}, {2, "a-name-longer-than-16"},
		{3, ""}, {-1, "kworker/0:1"}, {-1, "kworker/0:1"}, {0, "swapper/0"},
		// a char array: the string ends at the first NUL, whatever follows
		{4, "hackbench\x00\x00\x00\x00\x00\x00\x00"}, {4, "hackbench\x00\x00\x00\x00\x00\x00\x00"},
		{4, "hackbench\x00junk\x00\x00\x00"}, {4, "sh\x00ckbench\x00junk\x00"}, {4, "\x00h"},
	} {
		str, _, _ := strings.Cut(tc.comm, "\x00")
		if got, want := c.id(tc.pid, []byte(tc.comm)), strs.IDString(str); got != want {
			t.Errorf("%d: pid %d %q: id %d, Strings has %d", i, tc.pid, tc.comm, got, want)
		}
	}
}

// TestThreadNames: the paged table below PID_MAX_LIMIT and the map
// outside it behave as one map.
func TestThreadNames(t *testing.T) {
	var tn threadNames
	ref := map[int32]timeline.CommID{}
	for i, op := range []struct {
		del bool
		tid int32
		c   timeline.CommID
	}{
		{false, 0, 7}, {false, 5, 0}, {false, 100, 3}, {false, pidMaxLimit - 1, 4},
		{false, namePage - 1, 11}, {false, namePage, 12}, {true, namePage - 1, 0}, {true, 3 * namePage, 0},
		{false, pidMaxLimit, 5}, {false, -1, 6}, {false, 1 << 30, 8},
		{true, 5, 0}, {true, 99, 0}, {true, pidMaxLimit, 0}, {false, 5, 9}, {true, -1, 0},
		{true, 1<<31 - 1, 0}, {false, 100, 10},
	} {
		if op.del {
			tn.del(op.tid)
			delete(ref, op.tid)
		} else {
			tn.set(op.tid, op.c)
			ref[op.tid] = op.c
		}
		for _, tid := range []int32{0, 5, 99, 100, 101, namePage - 1, namePage, 3 * namePage, pidMaxLimit - 1, pidMaxLimit, -1, 1 << 30, 1<<31 - 1} {
			c, ok := tn.get(tid)
			if rc, rok := ref[tid]; c != rc || ok != rok {
				t.Fatalf("after op %d: tid %d: got %d %v, want %d %v", i, tid, c, ok, rc, rok)
			}
		}
	}
}

// TestStdLayoutIsFieldByField: the events of the captures read with the
// switch and wakeup fields at their offsets are those read field by field,
// and the captures' switches and wakeups have that layout.
func TestStdLayoutIsFieldByField(t *testing.T) {
	for _, data := range [][]byte{readFixture(t), readZst(t, "testdata/z.data.zst"), readZst(t, "testdata/lost.data.zst"), readZst(t, "testdata/pipe.data.zst")} {
		got, r, err := readData(t, data, parse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		std := 0
		for _, a := range r.attrs {
			if a.spec != nil && a.spec.std {
				std++
			}
		}
		if std < 2 {
			t.Fatalf("%d specs read at their offsets, want the switch's and a wakeup's", std)
		}
		fieldByField = true
		want, _, err := readData(t, data, parse.Options{})
		fieldByField = false
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d events, field by field %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("event %d: %+v, field by field %+v", i, got[i], want[i])
			}
		}
	}
}
