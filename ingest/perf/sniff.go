package perf

import "bytes"

// Sniff reports whether head (up to the first 64 KiB of the decompressed
// input) is perf script text: a perf --header block, or a first sample line
// with a [CPU] column, a timestamp and a "sys:name:" event name or a
// PERF_RECORD_* record. ftrace and trace-cmd text, whose event names have no
// system prefix and whose task column is "comm-pid", give false.
func Sniff(head []byte) bool {
	if bytes.HasPrefix(head, []byte("# ========\n# captured on")) {
		return true
	}
	samples := 0
	for len(head) > 0 {
		line := head
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			// The last line may be cut by the 64 KiB limit; judge it only
			// when nothing else decided.
			if samples > 0 {
				return true
			}
			head = nil
		} else {
			line, head = head[:i], head[i+1:]
		}
		line = trimEOL(line)
		if len(line) == 0 || line[0] == '#' || line[0] == '\t' || bytes.HasPrefix(line, []byte("PERF_RECORD_")) {
			continue
		}
		var s sample
		if s.parse(line) != "" {
			return false
		}
		if !s.record && len(s.sys) == 0 {
			return false
		}
		samples++
		if samples == 4 {
			return true
		}
	}
	return samples > 0
}
