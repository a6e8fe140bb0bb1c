package ingest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schedlens/schedlens/topology"
)

// MetaFileName is the capture notes file the capture scripts write next to
// a text trace (tools/qemu's capture.sh, the ftrace and perf capture
// scripts): "key: value" lines, of which ReleaseNextTo reads "kernel".
const MetaFileName = "meta.txt"

// MetaFileNextTo returns the meta.txt of a trace: in the trace's folder,
// or in the folder itself when tracePath is one.
func MetaFileNextTo(tracePath string) string {
	dir := tracePath
	if st, err := os.Stat(tracePath); err != nil || !st.IsDir() {
		dir = filepath.Dir(tracePath)
	}
	return filepath.Join(dir, MetaFileName)
}

// metaLine returns the value of the first "key:" line of the meta.txt next
// to a trace, the file and the line number; "" (and no error) when there
// is no such file or line. A file that cannot be read is an error.
func metaLine(tracePath, key string) (value, file string, line int, err error) {
	file = MetaFileNextTo(tracePath)
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return "", "", 0, nil
	}
	if err != nil {
		return "", "", 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line = 1; sc.Scan(); line++ {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			return v, file, line, nil
		}
	}
	return "", "", 0, sc.Err()
}

// ReleaseNextTo returns the kernel release recorded in meta.txt next to a
// trace (in the trace's folder, or in the folder itself), and the file it
// came from; "" when there is no such file or line. Its "kernel:" line is
// either the release ("kernel: 6.18.44-fc-v1045") or a whole uname -a
// line ("kernel: Linux HOST 6.12.95+deb12-arm64 #1 SMP ..."), whose third
// field is the release. A meta.txt that cannot be read is an error; one
// whose kernel line has no release is an error with its line number.
func ReleaseNextTo(tracePath string) (release, file string, err error) {
	v, file, line, err := metaLine(tracePath, "kernel")
	if err != nil || file == "" {
		return "", "", err
	}
	fields := strings.Fields(v)
	if len(fields) >= 3 && fields[0] == "Linux" {
		return fields[2], file, nil
	}
	if len(fields) == 0 || fields[0] == "Linux" {
		return "", "", fmt.Errorf("%s:%d: kernel line %q: want a release (6.12.95) or a uname -a line", file, line, "kernel:"+v)
	}
	return fields[0], file, nil
}

// ClockNextTo returns the trace clock recorded in meta.txt next to a trace
// (its "clock:" line, e.g. "clock: mono"), for a text trace that does not
// name its clock; "" when there is no such file or line.
func ClockNextTo(tracePath string) (string, error) {
	v, _, _, err := metaLine(tracePath, "clock")
	if fs := strings.Fields(v); err == nil && len(fs) > 0 {
		return fs[0], nil
	}
	return "", err
}

// KernelRelease returns the recorded kernel's release and where it came
// from, from the first source that has it: the trace itself (perf.data
// header, Perfetto system info), the topology capture (topo, may be nil),
// then meta.txt next to the trace at path. "" when none says.
func KernelRelease(ld *Loaded, topo *topology.Topology, path string) (release, source string, err error) {
	if ld.Meta.Kernel != "" {
		return ld.Meta.Kernel, "in the " + ld.Meta.Format + " trace", nil
	}
	if topo != nil && topo.Kernel != nil && topo.Kernel.Release != "" {
		return topo.Kernel.Release, "from the topology capture " + topo.Source, nil
	}
	rel, file, err := ReleaseNextTo(path)
	if err != nil || rel == "" {
		return "", "", err
	}
	return rel, "from " + file, nil
}

// DateNextTo returns when the trace was recorded, from the "date:" line of
// meta.txt next to it (RFC 3339, as the capture scripts write it: "date:
// 2026-12-06T02:39:06Z"); false when there is no such file or line, or
// the line is not such a time (the date only informs a warning, so an
// unreadable one is no error).
func DateNextTo(tracePath string) (time.Time, bool) {
	v, _, _, err := metaLine(tracePath, "date")
	if err != nil || v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
	return t, err == nil
}
