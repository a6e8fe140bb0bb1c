package main

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestOutputIdentity pins the bytes of `tasks --format json` and
// `report --format json` on real fixtures of every text and binary reader.
// The digests were taken from the code before the ingest speed work (issue
// 17: pre-sized builder columns, no identity permute, dense pid index); a
// change to them means the output changed, which a speed change must not
// do. To see what changed, run the two commands with the binary of the
// parent commit and diff.
func TestOutputIdentity(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"tasks", "--format", "json", fx + "ftrace-hackbench-cyclictest/trace.txt.gz"}, "c7614faa09adc6ac"},
		{[]string{"tasks", "--format", "json", fx + "ftrace-overflow/trace.txt.gz"}, "8e1afc3227039f70"},
		{[]string{"tasks", "--format", "json", fx + "ftrace-pipe-lost/trace.txt.gz"}, "6b001efc1b2264ac"},
		{[]string{"tasks", "--format", "json", fx + "ftrace-oracle-busy/report.txt.zst"}, "62819d97801bef43"},
		{[]string{"tasks", "--format", "json", fx + "ftrace-oracle-busy/trace.dat.zst"}, "84a092f64a5e8be1"},
		{[]string{"tasks", "--format", "json", fx + "qemu-smt8-pingpong/trace.txt.zst"}, "2362355e1d4d1daf"},
		{[]string{"tasks", "--format", "json", fx + "perf-hackbench-cyclictest/perf-script.txt.gz"}, "75c2b014a60a2955"},
		{[]string{"tasks", "--format", "json", fx + "perf-hackbench-cyclictest/perf.data.zst"}, "265f3b3cfac53373"},
		{[]string{"tasks", "--format", "json", fx + "perfetto-tracebox-hackbench-compact/trace.pftrace.zst"}, "6134d97112b95580"},
		{[]string{"report", "--format", "json", fx + "ftrace-hackbench-cyclictest/trace.txt.gz"}, "361212be252c20ed"},            // the report names unobserved time since the issue-14 work
		{[]string{"report", "--format", "json", fx + "perf-hackbench-cyclictest/perf-script-fields.txt.gz"}, "5ba08cd024af31c0"}, // report counts the unknown events (hardening work) and names unobserved time (issue-14 work)
		{[]string{"report", "--format", "json", fx + "qemu-juno-asym/trace.txt.zst"}, "09a210000f7e4ddc"},
	}
	for _, c := range cases {
		out, stderr, code := execute(t, c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, stderr)
			continue
		}
		sum := sha256.Sum256([]byte(out))
		if got := hex.EncodeToString(sum[:8]); got != c.want {
			t.Errorf("%v: output digest %s, want %s (%d bytes)", c.args, got, c.want, len(out))
		}
	}
}
