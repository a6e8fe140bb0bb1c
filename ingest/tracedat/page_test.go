package tracedat

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestPageByHand decodes a ring-buffer page built by hand from the layout
// in include/linux/ring_buffer.h and kernel/trace/ring_buffer.c, in both
// byte orders: a 32-bit header word of type_len (5 bits) and time_delta
// (27 bits), type_len 1..28 for data of 4*type_len bytes, 0 for a length
// word (including itself) then data rounded up to 4 bytes, 29 padding
// (array[0] bytes to skip), 30 time extend (array[0]<<27 + delta added),
// 31 absolute stamp; the commit word with RB_MISSED_EVENTS (bit 31) and
// RB_MISSED_STORED (bit 30), the missed count stored after the data.
func TestPageByHand(t *testing.T) {
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(order.String(), func(t *testing.T) {
			big := order == binary.BigEndian
			var data []byte
			word := func(typeLen, delta uint32) {
				w := typeLen | delta<<5
				if big {
					w = typeLen<<27 | delta
				}
				data = order.(binary.AppendByteOrder).AppendUint32(data, w)
			}
			u32 := func(v uint32) { data = order.(binary.AppendByteOrder).AppendUint32(data, v) }
			payload := func(n int, fill byte) { data = append(data, bytes.Repeat([]byte{fill}, n)...) }

			const base = 1000
			ext := uint64(5)<<27 + 7
			abs := uint64(2)<<27 + 99
			word(2, 10) // 8 bytes of data at base+10
			payload(8, 0xa1)
			word(30, uint32(ext&(1<<27-1))) // time extend
			u32(uint32(ext >> 27))
			word(3, 3) // 12 bytes at +3
			payload(12, 0xa2)
			word(29, 1) // padding (a discarded event): 8 bytes after the header, the length word included
			u32(8)
			payload(4, 0xee)
			word(0, 0) // length word: 14 = 4 + 10 bytes of data, 12 stored
			u32(14)
			payload(12, 0xa3)
			word(31, uint32(abs&(1<<27-1))) // absolute stamp
			u32(uint32(abs >> 27))
			word(1, 1) // 4 bytes at abs+1
			payload(4, 0xa4)
			commit := uint64(len(data)) | missedEvents | missedStored

			page := make([]byte, 4096)
			order.PutUint64(page[0:], base)
			order.PutUint64(page[8:], commit)
			copy(page[16:], data)
			order.PutUint64(page[16+len(data):], 42) // the missed count

			r := &Reader{order: order, bigEndian: big, pageSize: 4096, longSize: 8, tsOff: 0, commitOff: 8, commitSize: 8, dataOff: 16, ra: bytes.NewReader(page), size: 4096}
			s := &stream{r: r, end: 4096}
			type rec struct {
				ts   uint64
				n    int
				fill byte
			}
			want := []rec{
				{base + 10, 8, 0xa1},
				{base + 10 + ext + 3, 12, 0xa2},
				{base + 10 + ext + 3, 10, 0xa3},
				{abs + 1, 4, 0xa4},
			}
			var got []rec
			for {
				if err := s.advance(); err != nil {
					t.Fatal(err)
				}
				if !s.valid {
					break
				}
				got = append(got, rec{s.evTS, len(s.rec), s.rec[0]})
			}
			if len(got) != len(want) {
				t.Fatalf("records %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("record %d: %+v, want %+v", i, got[i], want[i])
				}
			}
			if !s.lost || s.lostCount != 42 {
				t.Errorf("lost %v count %d, want true 42", s.lost, s.lostCount)
			}
		})
	}
}
