package perfdata

import (
	"bytes"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/ingest/perf"
	"github.com/schedlens/schedlens/timeline"
)

func readZst(tb testing.TB, path string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	b, err := d.DecodeAll(raw, nil)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return b
}

// TestTwins reads captures of this machine (testdata/README.md) in pipe
// mode, compressed, and with lost events, and compares them event for
// event, to the nanosecond, with what perf script --ns printed from them.
func TestTwins(t *testing.T) {
	for _, tc := range []struct {
		name      string
		format    string
		lostRecs  int
		lostTotal int64 // perf report -D: sum of PERF_RECORD_LOST lost:N
	}{
		{"pipe", "perf.data (pipe)", 0, 0},
		{"z", "perf.data", 0, 0},
		{"lost", "perf.data", 9, 1648},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, rd, err := readData(t, readZst(t, "testdata/"+tc.name+".data.zst"), parse.Options{Name: tc.name})
			if err != nil {
				t.Fatal(err)
			}
			tr, _ := perf.NewReader(bytes.NewReader(readZst(t, "testdata/"+tc.name+".txt.zst")), parse.Options{})
			txt, err := readAll(t, tr)
			if err != nil {
				t.Fatal(err)
			}
			if len(bin) < 1000 || len(bin) != len(txt) {
				t.Fatalf("perf.data gave %d events, perf script %d", len(bin), len(txt))
			}
			var lost int64
			nLost := 0
			for i := range bin {
				if bin[i] != txt[i] {
					t.Fatalf("event %d:\n perf.data   %+v\n perf script %+v", i, bin[i], txt[i])
				}
				if bin[i].Kind == timeline.KindLost {
					lost += bin[i].Arg
					nLost++
				}
			}
			m := rd.Meta()
			if m.Format != tc.format || m.NCPU != 2 || m.Kernel == "" || m.Topology == nil {
				t.Errorf("Format %q NCPU %d Kernel %q Topology %v", m.Format, m.NCPU, m.Kernel, m.Topology)
			}
			if lost != tc.lostTotal || rd.lostRecs != tc.lostRecs || rd.synthLost != tc.lostTotal {
				t.Errorf("lost %d in %d records (closing LOST_SAMPLES %d), want %d in %d", lost, rd.lostRecs, rd.synthLost, tc.lostTotal, tc.lostRecs)
			}
			wantCov := timeline.CoverageUnknown
			if tc.lostRecs > 0 {
				wantCov = timeline.CoverageLost
			}
			if m.Coverage != wantCov || m.Coverage != tr.Meta().Coverage {
				t.Errorf("coverage %v, want %v", m.Coverage, wantCov)
			}
		})
	}
}
