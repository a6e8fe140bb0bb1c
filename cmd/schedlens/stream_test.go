package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestStreamSameAsLoad: tasks, cpus, report, latency, idle and misplaced
// print the same stdout and stderr whether the trace is read twice and
// streamed or loaded whole, on real text traces of each reader, with a
// window, markers, a filter, lost events, a clipped buffer, SMT siblings,
// asymmetric CPUs, an affinity file, cookies and a malformed line skipped
// under --lenient, and on perf.data and trace.dat; and a format that cannot
// be streamed (Perfetto) falls back to loading.
func TestStreamSameAsLoad(t *testing.T) {
	// A text trace with a malformed line at 90%.
	raw, err := os.ReadFile(fx + "ftrace-oracle-busy/trace.txt.zst")
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	text, err := dec.DecodeAll(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.IndexByte(text[len(text)*9/10:], '\n') + len(text)*9/10 + 1
	bad := filepath.Join(t.TempDir(), "bad.txt")
	damaged := append(append(append([]byte{}, text[:cut]...), "          <idle>-0     [001] d..2. 577.0: sched_switch: garbage\n"...), text[cut:]...)
	if err := os.WriteFile(bad, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	// The same text with two adjacent records of different CPUs swapped:
	// each CPU's stream is still in order, the whole is not.
	lines := bytes.SplitAfter(text, []byte("\n"))
	swapped := false
	for i := len(lines) / 2; i+1 < len(lines) && !swapped; i++ {
		a, b := lines[i], lines[i+1]
		if bytes.Contains(a, []byte("[000]")) && bytes.Contains(b, []byte("[001]")) && !bytes.Equal(a[40:60], b[40:60]) {
			lines[i], lines[i+1] = b, a
			swapped = true
		}
	}
	if !swapped {
		t.Fatal("no records to swap")
	}
	unordered := filepath.Join(t.TempDir(), "unordered.txt")
	if err := os.WriteFile(unordered, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	// A trace with no event, and a gzip input cut short.
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, []byte("# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile(fx + "ftrace-hackbench-cyclictest/trace.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "cut.txt.gz")
	if err := os.WriteFile(short, gz[:len(gz)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args    []string
		streams bool // the streamed read runs to its end
	}{
		{[]string{"tasks", fx + "ftrace-oracle-busy/trace.txt.zst"}, true},
		{[]string{"tasks", "--format", "json", "--start-marker", "oracle_start", "--end-marker", "oracle_end", fx + "ftrace-oracle-busy/trace.txt.zst"}, true},
		{[]string{"tasks", "--format", "markdown", "--comm", "cyclictest", "--start", "576.5", fx + "ftrace-oracle-busy/report.txt.zst"}, true},
		{[]string{"tasks", "--pid", "1,999999", fx + "ftrace-hackbench-cyclictest/trace.txt.gz"}, true},
		{[]string{"tasks", "--format", "json", fx + "ftrace-overflow/trace.txt.gz"}, true},
		{[]string{"tasks", "--format", "json", fx + "ftrace-pipe-lost/trace.txt.gz"}, true},
		{[]string{"tasks", "--format", "html", fx + "perf-hackbench-cyclictest/perf-script.txt.gz"}, true},
		{[]string{"tasks", "--format", "json", fx + "perf-hackbench-cyclictest/perf.data.zst"}, true},
		{[]string{"tasks", "--format", "json", "../../ingest/perfdata/testdata/lost.data.zst"}, true}, // perf.data with lost records
		{[]string{"tasks", "--format", "json", fx + "ftrace-oracle-busy/trace.dat.zst"}, true},
		{[]string{"cpus", "--format", "json", "../../ingest/tracedat/testdata/real-lost.dat.zst"}, true},           // trace.dat with lost events
		{[]string{"tasks", "--format", "json", fx + "perfetto-tracebox-hackbench-plain/trace.pftrace.zst"}, false}, // loaded: Perfetto
		{[]string{"tasks", "--lenient", "--format", "json", bad}, true},
		{[]string{"tasks", bad}, false}, // the malformed line stops the first read
		{[]string{"tasks", "--start-marker", "no such marker", fx + "ftrace-oracle-busy/trace.txt.zst"}, false}, // stops before the second read
		{[]string{"tasks", "--format", "json", unordered}, false},                                               // loaded: not in time order
		{[]string{"tasks", empty}, true},
		{[]string{"tasks", "--lenient", "--format", "json", short}, true}, // what decompressed, with the warning
		{[]string{"cpus", fx + "ftrace-pipe-lost/trace.txt.gz"}, true},
		{[]string{"cpus", "--format", "json", "--end", "577", fx + "qemu-smt8-hackbench/trace.txt.zst"}, true},
		// The analysis commands: the collector, the accounting and the
		// affinity inference fed by one streamed walk; the filter and
		// the allowed CPUs resolved after it.
		{[]string{"report", fx + "ftrace-hackbench-cyclictest/trace.txt.gz"}, true},
		{[]string{"report", "--format", "json", "--start-marker", "oracle_start", "--end-marker", "oracle_end", fx + "ftrace-oracle-busy/trace.txt.zst"}, true},
		{[]string{"report", "--format", "json", "--pid", "15,999999", "--min-window", "50us", fx + "ftrace-hackbench-cyclictest/trace.txt.gz"}, true},
		{[]string{"report", "--format", "markdown", fx + "ftrace-pipe-lost/trace.txt.gz"}, true},
		{[]string{"report", "--format", "html", fx + "ftrace-overflow/trace.txt.gz"}, true},
		{[]string{"report", "--format", "json", fx + "../seeds/004/before/run-2/trace.txt.zst"}, true}, // SMT, cookies
		{[]string{"report", "--format", "json", "--affinity", fx + "qemu-juno-asym/affinity.txt", fx + "qemu-juno-asym/trace.txt.zst"}, true},
		{[]string{"report", "--format", "json", "--no-infer-affinity", fx + "ftrace-oracle-busy/report.txt.zst"}, true},
		{[]string{"report", "--format", "json", fx + "perf-hackbench-cyclictest/perf.data.zst"}, true},
		{[]string{"report", "--format", "json", "--start-marker", "oracle_start", "--end-marker", "oracle_end", fx + "ftrace-oracle-busy/trace.dat.zst"}, true},
		{[]string{"report", "--format", "json", fx + "perfetto-tracebox-hackbench-plain/trace.pftrace.zst"}, false}, // loaded: Perfetto
		{[]string{"report", "--lenient", "--format", "json", bad}, true},
		{[]string{"report", "--start-marker", "no such marker", fx + "ftrace-oracle-busy/trace.txt.zst"}, false},
		{[]string{"report", "--comm", "nosuch", fx + "ftrace-pipe-lost/trace.txt.gz"}, true}, // the filter selects nothing: an error after the walk
		{[]string{"report", "--lenient", "--format", "json", short}, true},
		{[]string{"report", empty}, true},
		{[]string{"report", "--format", "json", unordered}, false},                                  // loaded: not in time order
		{[]string{"report", "--topology", "sym-1", fx + "ftrace-oracle-busy/trace.txt.zst"}, false}, // stops before the second read
		{[]string{"latency", "--format", "json", "--comm", "cyclictest", fx + "perf-hackbench-cyclictest/perf-script.txt.gz"}, true},
		{[]string{"idle", "--format", "json", fx + "qemu-smt8-hackbench/trace.txt.zst"}, true},
		{[]string{"misplaced", "--format", "json", fx + "qemu-juno-asym/trace.txt.zst"}, true},
	}
	for _, tc := range cases {
		c := tc.args
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			args := func(mode string) []string {
				out := []string{c[0], "--stream", mode}
				if c[0] != "tasks" && c[0] != "cpus" {
					// Exact percentiles when streamed (TestStreamEstimates:
					// without); the reports print the command, so both.
					out = append(out, "--exact")
				}
				return append(out, c[1:]...)
			}
			wantOut, wantErr, wantCode := execute(t, args("never")...)
			before := streamedReads.Load()
			gotOut, gotErr, gotCode := execute(t, args("always")...)
			if streamed := streamedReads.Load() > before; streamed != tc.streams {
				t.Errorf("streamed: %v, want %v", streamed, tc.streams)
			}
			if slices.Contains(c, "no such marker") || slices.Contains(c, "sym-1") {
				// A window that cannot be resolved, or a topology that
				// does not fit, stops the streamed read before its
				// second pass, where the inconsistencies are found.
				var keep []string
				for _, l := range strings.SplitAfter(wantErr, "\n") {
					if !strings.Contains(l, "inconsistencies") {
						keep = append(keep, l)
					}
				}
				wantErr = strings.Join(keep, "")
			}
			if gotCode != wantCode || gotOut != wantOut || gotErr != wantErr {
				t.Errorf("streamed: exit %d, %d bytes out, stderr %q\nloaded: exit %d, %d bytes out, stderr %q",
					gotCode, len(gotOut), gotErr, wantCode, len(wantOut), wantErr)
			}
			if wantCode == 0 && len(wantOut) < 200 {
				t.Errorf("only %d bytes out", len(wantOut))
			}
		})
	}
	if _, stderr, code := execute(t, "tasks", "--stream", "sometimes", fx+"ftrace-oracle-busy/trace.txt.zst"); code != 2 || !strings.Contains(stderr, "--stream") {
		t.Errorf("--stream sometimes: exit %d, %q", code, stderr)
	}
}

// TestStreamEstimates: a streamed report without --exact is the loaded
// report but for the latency percentiles of groups over 64 samples that
// their buckets cannot give exactly, which are listed as estimated and lie
// within 0.5% of the exact ones; the text report marks them with "~" and
// says what they are.
func TestStreamEstimates(t *testing.T) {
	trace := fx + "ftrace-oracle-busy/trace.txt.zst"
	wantOut, _, code := execute(t, "report", "--stream", "never", "--format", "json", trace)
	if code != 0 {
		t.Fatalf("loaded: exit %d", code)
	}
	gotOut, _, code := execute(t, "report", "--stream", "always", "--format", "json", trace)
	if code != 0 {
		t.Fatalf("streamed: exit %d", code)
	}
	var want, got any
	if err := json.Unmarshal([]byte(wantOut), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(gotOut), &got); err != nil {
		t.Fatal(err)
	}
	lat := got.(map[string]any)["latency"].(map[string]any)
	if lat["exactness"] != "estimated" || lat["estimated_definition"] == nil {
		t.Errorf("latency exactness %v, definition %v: want estimated, and said how", lat["exactness"], lat["estimated_definition"])
	}
	var estimated, checked int
	var walk func(path string, w, g any)
	walk = func(path string, w, g any) {
		switch w := w.(type) {
		case map[string]any:
			gm, ok := g.(map[string]any)
			if !ok {
				t.Fatalf("%s: %T, want an object", path, g)
			}
			est := map[string]bool{}
			if l, ok := gm["estimated"].([]any); ok {
				estimated++
				for _, k := range l {
					est[k.(string)] = true
				}
			}
			for k, wv := range w {
				gv := gm[k]
				if est[k] {
					checked++
					x, e := wv.(float64), gv.(float64)
					if math.Abs(e-x) > 0.005*math.Abs(x) {
						t.Errorf("%s.%s: %v, want within 0.5%% of %v", path, k, e, x)
					}
					continue
				}
				walk(path+"."+k, wv, gv)
			}
			for k := range gm {
				if _, ok := w[k]; !ok && k != "estimated" && k != "estimated_definition" {
					t.Errorf("%s.%s: only in the streamed report", path, k)
				}
			}
		case []any:
			gs, ok := g.([]any)
			if !ok || len(gs) != len(w) {
				t.Fatalf("%s: %v, want %d items", path, g, len(w))
			}
			for i := range w {
				walk(fmt.Sprintf("%s[%d]", path, i), w[i], gs[i])
			}
		default:
			if path == ".latency.exactness" || path == ".latency.preemption.exactness" || path == ".command" {
				return
			}
			if !reflect.DeepEqual(w, g) {
				t.Errorf("%s: %v, want %v", path, g, w)
			}
		}
	}
	walk("", want, got)
	t.Logf("%d distributions estimated, %d percentiles checked", estimated, checked)
	if estimated == 0 || checked == 0 {
		t.Error("nothing estimated")
	}
	text, _, _ := execute(t, "report", "--stream", "always", trace)
	if !strings.Contains(text, "~") || !strings.Contains(text, "--exact keeps every sample") {
		t.Errorf("the text report does not mark its estimates:\n%s", text)
	}
}
