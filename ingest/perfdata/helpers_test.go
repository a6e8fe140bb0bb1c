package perfdata

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
	"os"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// Fixture paths, relative to the package directory.
const (
	fixtureDir    = "../../fixtures/real/perf-hackbench-cyclictest/"
	fixtureData   = fixtureDir + "perf.data.zst"
	fixtureFields = fixtureDir + "perf-script-fields.txt.gz"
	fixtureText   = fixtureDir + "perf-script.txt.gz"
)

// readFixture returns the decompressed perf.data fixture (cached).
var fixtureBytes []byte

func readFixture(tb testing.TB) []byte {
	tb.Helper()
	if fixtureBytes != nil {
		return fixtureBytes
	}
	raw, err := os.ReadFile(fixtureData)
	if err != nil {
		tb.Fatal(err)
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	fixtureBytes, err = d.DecodeAll(raw, nil)
	if err != nil {
		tb.Fatalf("%s: %v", fixtureData, err)
	}
	return fixtureBytes
}

func readGz(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return data
}

// view is an Event with its interned strings resolved, for comparisons.
type view struct {
	Time, Start timeline.Time
	CPU         timeline.CPU
	Kind        timeline.Kind
	Ctx         timeline.Context
	State       timeline.State
	Task, Other timeline.TID
	Comm, OComm string
	Prio, OPrio int16
	TGID        int32
	Arg, Arg2   int64
}

func viewOf(ev *timeline.Event, s *timeline.Strings) view {
	v := view{Time: ev.Time, Start: ev.Start, CPU: ev.CPU, Kind: ev.Kind, Ctx: ev.Ctx, State: ev.State,
		Task: ev.Task, Other: ev.Other, Prio: ev.Prio, OPrio: ev.OPrio, TGID: ev.TGID, Arg: ev.Arg, Arg2: ev.Arg2}
	if ev.Comm != timeline.NoComm {
		v.Comm = s.Get(ev.Comm)
	}
	if ev.OComm != timeline.NoComm {
		v.OComm = s.Get(ev.OComm)
	}
	if ev.Kind == timeline.KindMarker {
		v.Arg = 0
		v.Comm = s.Get(timeline.CommID(ev.Arg))
	}
	return v
}

// readAll reads every event of a parse.Reader.
func readAll(tb testing.TB, r parse.Reader) ([]view, error) {
	tb.Helper()
	var evs []view
	var ev timeline.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, viewOf(&ev, r.Strings()))
	}
}

// readData reads perf.data bytes whole.
func readData(tb testing.TB, data []byte, opts parse.Options) ([]view, *Reader, error) {
	tb.Helper()
	r, err := NewReader(bytes.NewReader(data), opts)
	if err != nil {
		return nil, nil, err
	}
	evs, err := readAll(tb, r)
	return evs, r, err
}

// shrink returns a valid file-mode perf.data holding the first records of
// data's data section (up to about keep bytes, cut at a record boundary),
// with the same header, attrs and feature sections: the feature table and
// sections are moved to follow the shorter data section.
func shrink(tb testing.TB, data []byte, keep int) []byte {
	tb.Helper()
	le := binary.LittleEndian
	dataOff, dataSize := le.Uint64(data[40:]), le.Uint64(data[48:])
	n := uint64(0)
	for n < dataSize && n < uint64(keep) {
		n += uint64(le.Uint16(data[dataOff+n+6:]))
	}
	out := append([]byte(nil), data[:dataOff+n]...)
	le.PutUint64(out[48:], n)
	nfeat := 0
	for i := 0; i < 4; i++ {
		nfeat += bits.OnesCount64(le.Uint64(data[72+8*i:]))
	}
	oldTab := dataOff + dataSize
	tab := len(out)
	out = append(out, make([]byte, 16*nfeat)...)
	for i := 0; i < nfeat; i++ {
		off, size := le.Uint64(data[oldTab+uint64(16*i):]), le.Uint64(data[oldTab+uint64(16*i)+8:])
		le.PutUint64(out[tab+16*i:], uint64(len(out)))
		le.PutUint64(out[tab+16*i+8:], size)
		out = append(out, data[off:off+size]...)
	}
	return out
}

// capture is a perf.data the tests read, by name.
type capture struct {
	name string
	data []byte
}

// testCaptures returns the fixture and the testdata captures: compressed
// records (z), lost records, scheduler events alone, and pipe mode.
func testCaptures(tb testing.TB) []capture {
	tb.Helper()
	out := []capture{{"fixture", readFixture(tb)}}
	for _, name := range []string{"z", "lost", "sched-only", "pipe"} {
		out = append(out, capture{name, readZst(tb, "testdata/"+name+".data.zst")})
	}
	return out
}
