package perfetto

import (
	"bytes"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/encoding/protowire"
)

// A tiny protobuf builder for hand-made test traces.

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// vf is a varint field.
func vf(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

// bf is a length-delimited field.
func bf(num protowire.Number, parts ...[]byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), cat(parts...))
}

func sf(num protowire.Number, s string) []byte { return bf(num, []byte(s)) }

// packed is a packed repeated varint field.
func packed(num protowire.Number, vals ...uint64) []byte {
	var b []byte
	for _, v := range vals {
		b = protowire.AppendVarint(b, v)
	}
	return bf(num, b)
}

// packet is one Trace.packet.
func packet(fields ...[]byte) []byte { return bf(fTracePacket, fields...) }

// bundle is a TracePacket field holding an FtraceEventBundle.
func bundle(cpu uint64, fields ...[]byte) []byte {
	return bf(fPacketFtraceEvents, vf(fBundleCPU, cpu), cat(fields...))
}

// fevent is one FtraceEvent of a bundle.
func fevent(ts, pid uint64, payloadField protowire.Number, payload ...[]byte) []byte {
	return bf(fBundleEvent, vf(fEventTimestamp, ts), vf(fEventPid, pid), bf(payloadField, payload...))
}

func switchEv(ts uint64, prevComm string, prevPid int64, prevState int64, nextComm string, nextPid int64) []byte {
	return fevent(ts, uint64(prevPid), fEvSchedSwitch,
		sf(fSwitchPrevComm, prevComm), vf(fSwitchPrevPid, uint64(prevPid)), vf(fSwitchPrevPrio, 120),
		vf(fSwitchPrevState, uint64(prevState)), sf(fSwitchNextComm, nextComm), vf(fSwitchNextPid, uint64(nextPid)),
		vf(fSwitchNextPrio, 120))
}

func wakingEv(ts uint64, waker uint64, comm string, pid int64, target int64) []byte {
	return fevent(ts, waker, fEvSchedWaking, sf(fWakeComm, comm), vf(fWakePid, uint64(pid)), vf(fWakePrio, 120), vf(fWakeTargetCPU, uint64(target)))
}

func deflateZlib(b []byte) []byte {
	var out bytes.Buffer
	w := zlib.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func deflateRaw(b []byte) []byte {
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, flate.DefaultCompression)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func compressZstd(b []byte) []byte {
	e, _ := zstd.NewWriter(nil)
	defer e.Close()
	return e.EncodeAll(b, nil)
}
