package perfdata

import "bytes"

// Sniff reports whether head (the start of the decompressed input) is a
// perf.data file, file or pipe mode: it starts with the magic "PERFILE2".
func Sniff(head []byte) bool {
	return bytes.HasPrefix(head, []byte(Magic))
}
