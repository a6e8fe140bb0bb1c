package ftrace

import (
	"bytes"

	"github.com/schedlens/schedlens/ingest/parse"
)

// Sniff reports whether head, the first bytes (up to 64 KiB) of a
// decompressed input, is ftrace text, a trace_pipe stream or trace-cmd
// report text. It decides on the first line that is not a comment, a blank,
// a lost-events line or a trace-cmd "version = " line: "# tracer:" and
// "cpus=N" say yes at once, otherwise that line must parse as a record's
// TASK-PID [CPU] TIMESTAMP: EVENT: columns. perf script lines ("comm pid
// [cpu] ..." without the dash) do not.
func Sniff(head []byte) bool {
	var r Reader
	r.meta = parse.NewMeta(FormatPipe)
	var h header
	for len(head) > 0 {
		line := head
		i := bytes.IndexByte(head, '\n')
		if i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimRight(line, "\r")
		switch {
		case len(bytes.TrimLeft(line, " \t")) == 0:
			continue
		case bytes.HasPrefix(line, []byte("# tracer:")):
			return true
		case line[0] == '#':
			continue
		case bytes.HasPrefix(line, []byte("cpus=")):
			_, n, ok := parseUint(line[5:], MaxCPU)
			return ok && n == len(line)-5
		case bytes.HasPrefix(line, []byte("version = ")):
			continue
		case bytes.HasPrefix(line, []byte("CPU:")) || bytes.HasPrefix(line, []byte("CPU ")):
			if r.cpuLine(line) == nil {
				continue
			}
			return false
		}
		if bytes.IndexByte(line, 0) >= 0 {
			return false
		}
		return r.header(line, &h) == nil
	}
	return false
}
