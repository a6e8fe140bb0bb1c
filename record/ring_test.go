package record

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"
)

// fakeRing builds a mappedRing over ordinary memory laid out like the
// kernel's mapping (data doubled), and writes records into it.
type fakeRing struct {
	r          mappedRing
	cons, prod uintptr
	size       uintptr
}

func newFakeRing(size int) *fakeRing {
	f := &fakeRing{size: uintptr(size)}
	f.r = mappedRing{cons: &f.cons, prod: &f.prod, data: make([]byte, 2*size), mask: uintptr(size - 1)}
	return f
}

func (f *fakeRing) put(b byte) {
	f.r.data[f.prod&f.r.mask] = b
	f.r.data[f.prod&f.r.mask+f.size] = b
	f.prod++
}

// write appends a record with header flags and payload.
func (f *fakeRing) write(flags uint32, payload string) {
	var h [8]byte
	binary.NativeEndian.PutUint32(h[:], uint32(len(payload))|flags)
	for _, b := range h {
		f.put(b)
	}
	for i := 0; i < len(payload); i++ {
		f.put(payload[i])
	}
	for f.prod%8 != 0 {
		f.put(0)
	}
}

func TestMappedRingConsume(t *testing.T) {
	tests := []struct {
		name     string
		skip     int // bytes consumed before the test, to start near the end
		records  []string
		flags    []uint32
		want     string
		wantDone bool
		wantCons int // bytes consumed by the call; -1 = all
	}{
		{"empty", 0, nil, nil, "", true, -1},
		{"two records", 0, []string{"abc", "defghijk"}, []uint32{0, 0}, "abc|defghijk", true, -1},
		{"discarded record skipped", 0, []string{"abc", "xx", "d"}, []uint32{0, ringDiscardBit, 0}, "abc|d", true, -1},
		{"stops at a busy record", 0, []string{"abc", "busy", "d"}, []uint32{0, ringBusyBit, 0}, "abc", false, 16},
		{"record wrapping the end", 48, []string{"0123456789abcdef"}, []uint32{0}, "0123456789abcdef", true, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRing(64)
			f.cons, f.prod = uintptr(tc.skip), uintptr(tc.skip)
			for i, r := range tc.records {
				f.write(tc.flags[i], r)
			}
			start := f.cons
			var got []string
			done, err := f.r.consume(time.Now().Add(time.Hour), func(b []byte) { got = append(got, string(b)) })
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got, "|"); g != tc.want || done != tc.wantDone {
				t.Errorf("consume = %q, done %v; want %q, done %v", g, done, tc.want, tc.wantDone)
			}
			want := f.prod
			if tc.wantCons >= 0 {
				want = start + uintptr(tc.wantCons)
			}
			if f.cons != want {
				t.Errorf("consumer position = %d, want %d", f.cons, want)
			}
		})
	}
}

func TestMappedRingCorrupt(t *testing.T) {
	f := newFakeRing(64)
	f.write(0, "abcd")
	f.prod -= 8 // the producer position now cuts the record short
	if _, err := f.r.consume(time.Now().Add(time.Hour), func([]byte) {}); err == nil {
		t.Errorf("consume of a record past the producer position: no error")
	}
}
