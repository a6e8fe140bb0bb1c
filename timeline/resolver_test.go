package timeline

import "testing"

// TestResolverPidReuse hand-works task instances for a pid the kernel can
// hand out (kept in the dense index) and one above its PID_MAX_LIMIT (a
// producer that is not the kernel, kept in the fallback map): a freed pid
// that reappears is a new instance; a fork's child is one instance with the
// task_newtask of the same clone; a pid seen again before its free is the
// same instance.
func TestResolverPidReuse(t *testing.T) {
	for _, pid := range []TID{7, maxDensePID + 5} {
		s := NewStrings()
		eb := evb{s}
		b := NewBuilder(s, 1)
		mk := func(tm Time, k Kind, task, other TID) Event {
			e := Event{}
			e.Reset()
			e.Time, e.CPU, e.Kind, e.Task, e.Other = tm, 0, k, task, other
			return e
		}
		b.Add(mk(1, KindNewTask, pid, 1))           // instance A
		b.Add(mk(1, KindFork, pid, 1))              // still A (same clone)
		b.Add(mk(2, KindWakeupNew, pid, 1))         // A
		b.Add(eb.sw(3, 0, 1, "S", pid))             // A runs
		b.Add(eb.sw(4, 0, pid, "X", 0))             // A dies
		b.Add(mk(5, KindFree, pid, NoTID))          // A freed
		b.Add(eb.wake(KindWaking, 6, 0, 0, pid, 0)) // B: the pid reused
		tl, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		want := []TaskID{1, 1, 1, 1, 1, 1, 3}
		// instances: 0 = pid 1 (the parent, looked up first), 1 = pid (A),
		// 2 = the idle task of CPU 0, 3 = pid (B)
		var got []TaskID
		for i := range tl.Len() {
			if tl.Kinds[i] == KindSwitch && i == 4 {
				got = append(got, tl.Other[i])
				continue
			}
			got = append(got, tl.TaskOf[i])
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("pid %d: event %d (%v) is instance %d, want %d (all: %v)", pid, i, tl.Kinds[i], got[i], want[i], got)
			}
		}
		if n := len(tl.Tasks); n != 4 || tl.Tasks[1].PID != pid || tl.Tasks[3].PID != pid || !tl.Tasks[1].Forked || tl.Tasks[3].Forked {
			t.Errorf("pid %d: tasks %+v", pid, tl.Tasks)
		}
	}
}
