package tracedat

import "bytes"

// Sniff reports whether head, the first bytes of a decompressed input, is a
// trace-cmd trace.dat file: the magic bytes 0x17 0x08 0x44 "tracing".
func Sniff(head []byte) bool { return bytes.HasPrefix(head, []byte(Magic)) }
