package perfetto

import (
	"github.com/schedlens/schedlens/ingest/parse"
)

// Parallel reading. Decoding the fields of an FtraceEventBundle needs
// nothing from the packets before it but the prev_state layout (steps 1
// and 2 of decodeBundle), and it is most of a Perfetto read. With more
// than one worker (parse.Options.Workers) the Reader reads the top-level
// packets on a goroutine of its own into blocks (parse.StartUnits), and
// its workers scan each packet's fields and decode its bundle there
// (prepared). Next then applies the packets in file order exactly as it
// applies the packets it decodes itself (applyPacket): the texts the
// workers met are interned in the order one decoder would have interned
// them (resolveRefs), so the events, strings, Meta and errors are the same
// as with one worker.
//
// The layout comes from SystemInfo, which a trace writes before its
// bundles; a worker reads the layout Next last published (layoutPub), and
// a bundle decoded with another layout than the one Next holds when it
// gets there is decoded again. Packets inside compressed_packets are
// decompressed and decoded by Next, as with one worker.

// prepared is one top-level TracePacket as a worker leaves it.
type prepared struct {
	off     int64
	p       packetFields
	fe      *fieldError // the packet's fields are malformed
	decoded bool        // bundle holds p.ftrace decoded
	bundle  decodedBundle
}

// blockPackets is the most packets a block holds (0: parse.BlockLines; a
// variable for the tests, which cut blocks small).
var blockPackets = 0

// blockSize is the bytes of packets after which a block is full. A
// block's decoded events take about five times its bytes, and a dozen
// blocks may be in flight; smaller blocks cost time (1 M events: 64 KiB
// blocks peak 10 MiB below 256 KiB ones, in the same time).
var blockSize = 64 << 10

// startParallel starts the packet reader and workers goroutines.
func (r *Reader) startParallel(workers int) {
	r.pipe = parse.StartUnits(r.cutPackets, workers, blockPackets, blockSize, r.newPacketParser)
}

// cutPackets fills b with the next top-level packets of the input (on the
// goroutine that reads it).
func (r *Reader) cutPackets(b *parse.Block[prepared, struct{}]) error {
	for !b.Full() {
		pkt, off, err := r.readPacket()
		if err != nil {
			return err
		}
		b.Add(pkt, off)
	}
	return nil
}

// newPacketParser returns the parse function of one worker: a bundle
// decoder of its own that defers interning.
func (r *Reader) newPacketParser() func(b *parse.Block[prepared, struct{}]) {
	x := &bundleDecoder{lenient: r.lenient}
	return func(b *parse.Block[prepared, struct{}]) {
		for pkt, off := range b.Units() {
			res := b.NewRes()
			res.off, res.decoded = off, false
			if res.fe = scanPacket(pkt, &res.p); res.fe != nil {
				continue
			}
			if p := &res.p; p.ftrace != nil && p.compressed == nil && p.zstd == nil {
				x.layout = stateLayout(r.layoutPub.Load())
				x.decode(p.ftrace, &res.bundle)
				res.decoded = true
			}
		}
	}
}

// stepParallel applies the next packet the workers prepared. It returns
// io.EOF at the end of input.
func (r *Reader) stepParallel() error {
	res, _, err := r.pipe.Next()
	if err != nil {
		return err
	}
	r.curOff = res.off
	if res.fe != nil {
		return r.perr(res.off, r.packetBase, res.fe)
	}
	var pre *decodedBundle
	if res.decoded {
		pre = &res.bundle
	}
	if fe := r.applyPacket(&res.p, res.off, pre); fe != nil {
		return r.perr(res.off, r.packetBase, fe)
	}
	return nil
}

// Close stops the goroutines of a Reader that reads in parallel; the
// input is not read any further, and Next returns parse.ErrClosed.
// Reading to the end or to an error stops them too.
func (r *Reader) Close() error {
	if r.pipe != nil {
		r.pipe.Close()
		r.closed = true
	}
	return nil
}
