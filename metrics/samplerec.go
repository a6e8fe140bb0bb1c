package metrics

import "github.com/schedlens/schedlens/timeline"

// sampleRec is what the analysis after the walk reads of a sample: 48
// bytes against a Sample's 88. An analysis whose caller reads no Sample
// (Options.NoSamples) keeps only these, one per wait; otherwise they are
// made from the Samples once the walk has ended, and what the analysis
// finds (names, IdleCPUNs) is written back into the Samples at its end.
type sampleRec struct {
	start  timeline.Time
	dur    int64 // DurNs
	idleNs int64 // IdleCPUNs, which the sweep adds up
	place  int64 // placement delay when split; the queue delay is dur - place
	task   timeline.TaskID
	comm   timeline.CommID // the task's name at start (nameSamples)
	cpu    timeline.CPU
	prio   int16
	kind   SampleKind
	bits   uint8 // censoring (2 bits), recBits below, waker's context (3 bits)
}

const (
	recNoWaking uint8 = 1 << (2 + iota)
	recSplit
	recCtxShift = 4
)

// recOf makes the record of sample s.
func recOf(s *Sample) sampleRec {
	r := sampleRec{start: s.Start, dur: s.DurNs, idleNs: s.IdleCPUNs, place: -1, task: s.Task, comm: s.CommID,
		cpu: s.CPU, prio: s.Prio, kind: s.Kind, bits: uint8(s.Censored)&3 | uint8(s.WakerCtx&7)<<recCtxShift}
	if s.NoWaking {
		r.bits |= recNoWaking
	}
	if s.split {
		r.bits |= recSplit
		r.place = int64(s.Wakeup - s.Start)
	}
	return r
}

func (r *sampleRec) censored() Censor           { return Censor(r.bits & 3) }
func (r *sampleRec) noWaking() bool             { return r.bits&recNoWaking != 0 }
func (r *sampleRec) split() bool                { return r.bits&recSplit != 0 }
func (r *sampleRec) wakerCtx() timeline.Context { return timeline.Context(r.bits >> recCtxShift) }

// keepMatching keeps, in order, the items of s whose task matches, and
// sets idx[i] to item i's new index (-1: dropped).
func keepMatching[T any](s []T, task func(*T) timeline.TaskID, match []bool, idx []int32) []T {
	n := 0
	for i := range s {
		idx[i] = -1
		if match[task(&s[i])] {
			idx[i] = int32(n)
			s[n] = s[i]
			n++
		}
	}
	clear(s[n:])
	return s[:n]
}

// completeWakeup reports whether r is a complete wakeup sample (a wait
// from a wakeup, not a preemption, not censored): what Latency.Wakeups
// holds.
func (r *sampleRec) completeWakeup() bool {
	return r.kind != SamplePreempt && r.censored() == CensoredNone
}
