package timeline

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestUnorderedBuildSorts: events handed to a Builder CPU by CPU in
// bundles (as a Perfetto trace holds them), out of time order, come out of
// Finish in time order with every field of each event in its columns: the
// oracle is the events sorted by their (distinct) times.
func TestUnorderedBuildSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	strs := NewStrings()
	comms := []CommID{strs.ID([]byte("a")), strs.ID([]byte("b")), strs.ID([]byte("c"))}
	const ncpu, per = 3, 5000
	times := rng.Perm(ncpu * per)
	var streams [ncpu][]Event
	for c := range ncpu {
		ts := times[c*per : (c+1)*per]
		slices.Sort(ts)
		for _, t := range ts {
			streams[c] = append(streams[c], Event{
				Time: Time(1000 + 10*t), Start: NoTime, CPU: CPU(c), Kind: KindMigrate,
				Ctx: Context(rng.IntN(4)), State: State(rng.IntN(3)),
				Task: TID(100 + rng.IntN(50)), Other: NoTID, Comm: comms[rng.IntN(3)], OComm: NoComm,
				Prio: int16(rng.IntN(140)), OPrio: -1, TGID: -1,
				Arg: int64(rng.IntN(ncpu)), Arg2: int64(rng.IntN(1 << 20)),
			})
		}
	}
	b := NewBuilder(strs, ncpu)
	var all []Event
	for pos := [ncpu]int{}; ; {
		c := rng.IntN(ncpu)
		if pos == [ncpu]int{per, per, per} {
			break
		}
		k := min(1+rng.IntN(300), per-pos[c])
		for _, e := range streams[c][pos[c] : pos[c]+k] {
			b.AddEvent(&e)
			all = append(all, e)
		}
		pos[c] += k
	}
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(all, func(x, y Event) int { return int(x.Time - y.Time) })
	if tl.Len() != len(all) {
		t.Fatalf("%d events, want %d", tl.Len(), len(all))
	}
	for i, e := range all {
		got := Event{Time: tl.Times[i], CPU: CPU(tl.CPUs[i]), Kind: tl.Kinds[i], Ctx: tl.Ctxs[i], State: tl.States[i],
			Task: tl.Tasks[tl.TaskOf[i]].PID, Comm: tl.Comms[i], Prio: int16(tl.Prios[i]), Arg: int64(tl.Args[i]), Arg2: int64(tl.Args2[i])}
		want := Event{Time: e.Time, CPU: e.CPU, Kind: e.Kind, Ctx: e.Ctx, State: e.State, Task: e.Task, Comm: e.Comm, Prio: e.Prio, Arg: e.Arg, Arg2: e.Arg2}
		if got != want {
			t.Fatalf("event %d: %+v, want %+v", i, got, want)
		}
	}
}
