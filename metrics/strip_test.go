package metrics

import "testing"

// Every bin of a CPU strip holds at most its own length, and the bins add up
// to what Account (an independent walk) says each CPU did: a run longer than
// a bin is spread over the bins it covers, not piled into one.
func TestCPUStripsAgreeWithAccount(t *testing.T) {
	for _, rel := range []string{"qemu-juno-asym/trace.txt.zst", "ftrace-hackbench-cyclictest/trace.txt.gz"} {
		tl := loadFixture(t, rel).Timeline
		win := DefaultWindow(tl)
		a, err := Analyze(tl, Options{Window: win})
		if err != nil {
			t.Fatal(err)
		}
		acc := Account(tl, win)
		span := int64(win.End - win.Start)
		for cpu, bins := range a.CPUStrips() {
			var busy, idle int64
			for k, b := range bins {
				if w := stripEdge(int64(k)+1, span) - stripEdge(int64(k), span); b.BusyNs+b.IdleNs > w || b.IdleWithRunnableNs > b.IdleNs {
					t.Fatalf("%s CPU %d bin %d of %d ns holds %+v", rel, cpu, k, w, b)
				}
				busy += b.BusyNs
				idle += b.IdleNs
			}
			if c := acc.CPUs[cpu]; busy != c.BusyNs || idle != c.IdleNs {
				t.Errorf("%s CPU %d: strip busy %d idle %d ns, Account busy %d idle %d", rel, cpu, busy, idle, c.BusyNs, c.IdleNs)
			}
		}
	}
}

func TestStripBinEdges(t *testing.T) {
	for _, span := range []int64{1, 399, 400, 401, 10984141000, 123457} {
		for k := int64(0); k < StripBins; k++ {
			lo, hi := stripEdge(k, span), stripEdge(k+1, span)
			for _, x := range []int64{lo, hi - 1} {
				if lo < hi && stripBin(x, span) != k {
					t.Fatalf("span %d: offset %d is in bin %d, want %d", span, x, stripBin(x, span), k)
				}
			}
		}
	}
}

// Analysis.UnobservedNs is, per CPU, what Account finds neither busy nor
// idle.
func TestUnobservedAgreesWithAccount(t *testing.T) {
	for _, rel := range []string{"perfetto-tracebox-hackbench-plain/trace.pftrace.zst", "ftrace-hackbench-cyclictest/trace.txt.gz", "ftrace-pipe-lost/trace.txt.gz"} {
		tl := loadFixture(t, rel).Timeline
		win := DefaultWindow(tl)
		a, err := Analyze(tl, Options{Window: win})
		if err != nil {
			t.Fatal(err)
		}
		acc := Account(tl, win)
		for cpu, c := range acc.CPUs {
			if a.UnobservedNs[cpu] != c.UnobservedNs {
				t.Errorf("%s CPU %d: unobserved %d ns, Account %d", rel, cpu, a.UnobservedNs[cpu], c.UnobservedNs)
			}
		}
	}
}
