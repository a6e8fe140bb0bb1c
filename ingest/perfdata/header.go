package perfdata

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/schedlens/schedlens/ingest/parse"
)

// Magic is the first 8 bytes of a perf.data file, file or pipe mode
// (PERF_MAGIC, "PERFILE2" as a little-endian u64, tools/perf/util/header.c).
// A file written on a big-endian host starts "2ELIFREP".
const Magic = "PERFILE2"

const (
	fileHeaderSize = 104 // struct perf_file_header (tools/perf/util/header.h)
	pipeHeaderSize = 16  // struct perf_pipe_file_header
	// maxAttrSize bounds perf_event_attr; the kernel's is 136 bytes today.
	maxAttrSize = 4096
	// maxSection bounds a feature or attr section read into memory.
	maxSection = 256 << 20
)

// Feature bits of perf_file_header.adds_features (enum in
// tools/perf/util/header.h).
const (
	featTracingData = 1
	featOSRelease   = 4
	featNRCPUs      = 7
	featCmdline     = 11
	featEventDesc   = 12
	featCPUTopology = 13
	featNUMA        = 14
	featCache       = 20
	featClockID     = 23
	featClockData   = 29
	featBits        = 256
)

var featNames = map[int]string{
	1: "TRACING_DATA", 2: "BUILD_ID", 3: "HOSTNAME", 4: "OSRELEASE", 5: "VERSION", 6: "ARCH",
	7: "NRCPUS", 8: "CPUDESC", 9: "CPUID", 10: "TOTAL_MEM", 11: "CMDLINE", 12: "EVENT_DESC",
	13: "CPU_TOPOLOGY", 14: "NUMA_TOPOLOGY", 15: "BRANCH_STACK", 16: "PMU_MAPPINGS",
	17: "GROUP_DESC", 18: "AUXTRACE", 19: "STAT", 20: "CACHE", 21: "SAMPLE_TIME",
	22: "MEM_TOPOLOGY", 23: "CLOCKID", 24: "DIR_FORMAT", 25: "BPF_PROG_INFO", 26: "BPF_BTF",
	27: "COMPRESSED", 28: "CPU_PMU_CAPS", 29: "CLOCK_DATA", 30: "HYBRID_TOPOLOGY", 31: "PMU_CAPS",
}

func featName(bit int) string {
	if n, ok := featNames[bit]; ok {
		return "HEADER_" + n
	}
	return fmt.Sprintf("feature %d", bit)
}

// section is a perf_file_section: offset and size in the file.
type section struct{ off, size uint64 }

// fileHeader is struct perf_file_header.
type fileHeader struct {
	size     uint64
	attrSize uint64
	attrs    section
	data     section
	features [4]uint64
}

// Attribute bits of perf_event_attr (include/uapi/linux/perf_event.h).
const (
	typeTracepoint = 2

	sampleIP         = 1 << 0
	sampleTID        = 1 << 1
	sampleTime       = 1 << 2
	sampleAddr       = 1 << 3
	sampleRead       = 1 << 4
	sampleCallchain  = 1 << 5
	sampleID         = 1 << 6
	sampleCPU        = 1 << 7
	samplePeriod     = 1 << 8
	sampleStreamID   = 1 << 9
	sampleRaw        = 1 << 10
	sampleIdentifier = 1 << 16

	readTotalTimeEnabled = 1 << 0
	readTotalTimeRunning = 1 << 1
	readID               = 1 << 2
	readGroup            = 1 << 3
	readLost             = 1 << 4

	// bit numbers in the flags word at offset 40
	flagSampleIDAll   = 1 << 18
	flagUseClockID    = 1 << 25
	flagWriteBackward = 1 << 27
)

// attr is what the reader keeps of one perf_event_attr.
type attr struct {
	typ        uint32
	config     uint64
	sampleType uint64
	readFormat uint64
	flags      uint64
	clockID    int32
	ids        []uint64
	name       string // from HEADER_EVENT_DESC or the tracepoint format
	spec       *eventSpec
	// Offsets of the sample fields in a PERF_RECORD_SAMPLE, header
	// included, when no variable-size field (READ, CALLCHAIN) comes before
	// RAW; -1 for a field absent. fixed says they are set.
	fixed                           bool
	offTID, offTime, offCPU, offRaw int
	// fast says the layout has TIME, CPU and RAW at fixed offsets: what
	// Reader.fastSample needs.
	fast bool
}

// layout sets the fixed sample offsets when the sample_type allows.
func (a *attr) layout() {
	st := a.sampleType
	if st&(sampleRead|sampleCallchain) != 0 {
		return
	}
	a.fixed = true
	a.offTID, a.offTime, a.offCPU, a.offRaw = -1, -1, -1, -1
	p := 8
	for _, f := range []struct {
		bit uint64
		off *int
	}{{sampleIdentifier, nil}, {sampleIP, nil}, {sampleTID, &a.offTID}, {sampleTime, &a.offTime},
		{sampleAddr, nil}, {sampleID, nil}, {sampleStreamID, nil}, {sampleCPU, &a.offCPU}, {samplePeriod, nil}} {
		if st&f.bit != 0 {
			if f.off != nil {
				*f.off = p
			}
			p += 8
		}
	}
	if st&sampleRaw != 0 {
		a.offRaw = p
	}
	a.fast = a.offTime >= 0 && a.offCPU >= 0 && a.offRaw >= 0
}

// decodeAttr reads a perf_event_attr of n bytes (offsets of
// include/uapi/linux/perf_event.h: type 0, size 4, config 8, sample_type
// 24, read_format 32, flags 40, clockid 92).
func decodeAttr(c *cursor, n int) *attr {
	b := c.bytes(n, "perf_event_attr")
	if c.err != nil {
		return nil
	}
	if n < 48 {
		c.pos -= n
		c.fail(parse.ErrBadField, "perf_event_attr of %d bytes, want at least 48 (PERF_ATTR_SIZE_VER0 is 64)", n)
		return nil
	}
	a := &attr{
		typ:        binary.LittleEndian.Uint32(b[0:]),
		config:     binary.LittleEndian.Uint64(b[8:]),
		sampleType: binary.LittleEndian.Uint64(b[24:]),
		readFormat: binary.LittleEndian.Uint64(b[32:]),
		flags:      binary.LittleEndian.Uint64(b[40:]),
	}
	if n >= 96 {
		a.clockID = int32(binary.LittleEndian.Uint32(b[92:]))
	}
	a.layout()
	return a
}

// idTrailerSize is the size of the sample_id block that closes non-sample
// records when sample_id_all is set: TID, TIME, ID, STREAM_ID, CPU,
// IDENTIFIER in that order (struct sample_id in perf_event.h).
func (a *attr) idTrailerSize() int {
	if a.flags&flagSampleIDAll == 0 {
		return 0
	}
	n := 0
	for _, bit := range []uint64{sampleTID, sampleTime, sampleID, sampleStreamID, sampleCPU, sampleIdentifier} {
		if a.sampleType&bit != 0 {
			n += 8
		}
	}
	return n
}

// readHeader reads and checks perf_file_header.
func readHeader(ra io.ReaderAt, size int64, file string) (*fileHeader, *parse.ParseError) {
	buf := make([]byte, fileHeaderSize)
	n, _ := ra.ReadAt(buf, 0)
	c := &cursor{b: buf[:n], sec: "file header", name: file}
	magic := c.bytes(8, "magic")
	if c.err == nil && string(magic) != Magic {
		c.pos = 0
		if string(magic) == "2ELIFREP" {
			c.fail(parse.ErrBadField, "big-endian perf.data is not supported")
		} else {
			c.fail(parse.ErrBadField, "want the magic %q, got %q", Magic, magic)
		}
	}
	h := &fileHeader{}
	h.size = c.u64("header size")
	h.attrSize = c.u64("attr size")
	h.attrs = section{c.u64("attrs offset"), c.u64("attrs size")}
	h.data = section{c.u64("data offset"), c.u64("data size")}
	c.u64("event_types offset")
	c.u64("event_types size")
	for i := range h.features {
		h.features[i] = c.u64("feature bitmap")
	}
	if c.err != nil {
		return nil, c.err
	}
	bad := func(at int, format string, args ...any) *parse.ParseError {
		return &parse.ParseError{File: file, Offset: int64(at), Record: "file header", Msg: fmt.Sprintf(format, args...), Err: parse.ErrBadField}
	}
	switch {
	case h.size != fileHeaderSize:
		return nil, bad(8, "header size %d, want %d", h.size, fileHeaderSize)
	case h.attrSize < 64+16 || h.attrSize > maxAttrSize+16:
		return nil, bad(16, "attr entry size %d, want a perf_event_attr of 64..%d bytes plus 16", h.attrSize, maxAttrSize)
	}
	for _, s := range []struct {
		name string
		at   int
		sec  section
	}{{"attrs", 24, h.attrs}, {"data", 40, h.data}} {
		if s.sec.off > uint64(size) || s.sec.size > uint64(size)-s.sec.off {
			return nil, &parse.ParseError{File: file, Offset: int64(s.at), Record: "file header", Err: parse.ErrTruncated,
				Msg: fmt.Sprintf("%s section [%#x, +%d) runs past the end of the file (%d bytes): cut off?", s.name, s.sec.off, s.sec.size, size)}
		}
	}
	return h, nil
}

// readSection reads a section into memory after checking it lies in the
// file.
func readSection(ra io.ReaderAt, fsize int64, s section, what, file string, at int64) ([]byte, *parse.ParseError) {
	if s.off > uint64(fsize) || s.size > uint64(fsize)-s.off {
		return nil, &parse.ParseError{File: file, Offset: at, Record: what, Err: parse.ErrTruncated,
			Msg: fmt.Sprintf("section [%#x, +%d) runs past the end of the file (%d bytes): cut off?", s.off, s.size, fsize)}
	}
	if s.size > maxSection {
		return nil, &parse.ParseError{File: file, Offset: at, Record: what, Err: parse.ErrBadField,
			Msg: fmt.Sprintf("section of %d bytes, at most %d accepted", s.size, maxSection)}
	}
	b := make([]byte, s.size)
	if _, err := ra.ReadAt(b, int64(s.off)); err != nil && err != io.EOF {
		return nil, &parse.ParseError{File: file, Offset: int64(s.off), Record: what, Msg: "reading: " + err.Error(), Err: err}
	}
	return b, nil
}

// readAttrs reads the attrs section: attrSize-16 bytes of perf_event_attr
// and a perf_file_section locating its u64 ids, per event.
func readAttrs(ra io.ReaderAt, fsize int64, h *fileHeader, file string) ([]*attr, *parse.ParseError) {
	b, perr := readSection(ra, fsize, h.attrs, "attrs", file, 24)
	if perr != nil {
		return nil, perr
	}
	c := &cursor{b: b, base: int64(h.attrs.off), sec: "attrs", name: file}
	if len(b)%int(h.attrSize) != 0 {
		c.fail(parse.ErrBadField, "attrs section of %d bytes is not a multiple of the entry size %d", len(b), h.attrSize)
		return nil, c.err
	}
	var attrs []*attr
	for c.pos < len(b) && c.err == nil {
		a := decodeAttr(c, int(h.attrSize)-16)
		at := c.off()
		ids := section{c.u64("ids offset"), c.u64("ids size")}
		if c.err != nil {
			break
		}
		if ids.size%8 != 0 {
			c.pos -= 8
			c.fail(parse.ErrBadField, "ids size %d is not a multiple of 8", ids.size)
			break
		}
		ib, perr := readSection(ra, fsize, ids, "attr ids", file, at)
		if perr != nil {
			return nil, perr
		}
		for i := 0; i+8 <= len(ib); i += 8 {
			a.ids = append(a.ids, binary.LittleEndian.Uint64(ib[i:]))
		}
		attrs = append(attrs, a)
	}
	if c.err != nil {
		return nil, c.err
	}
	if len(attrs) == 0 {
		return nil, &parse.ParseError{File: file, Offset: 24, Record: "attrs", Msg: "want at least one event attribute, got none", Err: parse.ErrBadField}
	}
	return attrs, nil
}

// readFeatures returns the feature sections present, by bit, read from the
// table that follows the data section.
func readFeatures(ra io.ReaderAt, fsize int64, h *fileHeader, file string) (map[int][]byte, map[int]int64, []int, *parse.ParseError) {
	n := 0
	for _, w := range h.features {
		n += bits.OnesCount64(w)
	}
	at := h.data.off + h.data.size
	tab, perr := readSection(ra, fsize, section{at, uint64(n) * 16}, "feature table", file, 40)
	if perr != nil {
		return nil, nil, nil, perr
	}
	c := &cursor{b: tab, base: int64(at), sec: "feature table", name: file}
	data := map[int][]byte{}
	offs := map[int]int64{}
	var order []int
	for bit := 0; bit < featBits; bit++ {
		if h.features[bit/64]&(1<<(bit%64)) == 0 {
			continue
		}
		where := c.off()
		s := section{c.u64("offset"), c.u64("size")}
		if c.err != nil {
			return nil, nil, nil, c.err
		}
		b, perr := readSection(ra, fsize, s, featName(bit), file, where)
		if perr != nil {
			return nil, nil, nil, perr
		}
		data[bit] = b
		offs[bit] = int64(s.off)
		order = append(order, bit)
	}
	return data, offs, order, nil
}
