package record

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Capability numbers, include/uapi/linux/capability.h.
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// Problem is one reason this machine cannot record, with what to do.
type Problem struct {
	What string // what is missing
	Fix  string // what the user can do
}

// UnsupportedError lists why recording cannot start. It is returned before
// anything is loaded into the kernel.
type UnsupportedError struct {
	Problems []Problem
}

func (e *UnsupportedError) Error() string {
	var b strings.Builder
	b.WriteString("cannot record on this machine:")
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  - %s\n    %s", p.What, p.Fix)
	}
	return b.String()
}

// host is what Check looks at, gathered by readHost.
type host struct {
	goos    string // runtime.GOOS
	euid    int
	capEff  uint64 // effective capability set; ok false when unreadable
	capOK   bool
	btf     bool   // /sys/kernel/btf/vmlinux exists
	release string // uname -r
}

// Check reports, without loading anything, whether this process can record:
// it needs root or CAP_BPF with CAP_PERFMON (CAP_SYS_ADMIN before Linux
// 5.8), kernel BTF (CONFIG_DEBUG_INFO_BTF), and Linux 5.5 or later for
// BTF-enabled tracepoints. The error is an *UnsupportedError naming each
// missing piece.
func Check() error {
	return checkHost(readHost())
}

func readHost() host {
	h := host{goos: runtime.GOOS, euid: os.Geteuid()}
	h.capEff, h.capOK = readCapEff("/proc/self/status")
	_, err := os.Stat("/sys/kernel/btf/vmlinux")
	h.btf = err == nil
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.release = unix.ByteSliceToString(u.Release[:])
	}
	return h
}

// readCapEff reads the CapEff line of a /proc/PID/status file.
func readCapEff(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func checkHost(h host) error {
	var ps []Problem
	if h.goos != "linux" {
		return &UnsupportedError{Problems: []Problem{{
			What: fmt.Sprintf("recording needs Linux (this is %s)", h.goos),
			Fix:  "record on the Linux machine to study and copy the trace here",
		}}}
	}
	major, minor, verOK := kernelVersion(h.release)
	has := func(c uint) bool { return h.capEff&(1<<c) != 0 }
	privileged := has(capSysAdmin) || (has(capBPF) && has(capPerfmon))
	if !h.capOK {
		privileged = h.euid == 0
	}
	if !privileged {
		who := fmt.Sprintf("uid %d", h.euid)
		if h.euid == 0 {
			who = "root without CAP_BPF/CAP_PERFMON/CAP_SYS_ADMIN (a restricted container?)"
		}
		ps = append(ps, Problem{
			What: fmt.Sprintf("not privileged (%s): loading tracing BPF programs needs root, or CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8)", who),
			Fix:  "run it as root (sudo schedlens record ...), or grant the capabilities: sudo setcap cap_bpf,cap_perfmon+ep $(command -v schedlens)",
		})
	}
	if verOK && (major < 5 || major == 5 && minor < 5) {
		ps = append(ps, Problem{
			What: fmt.Sprintf("kernel %s is too old: BTF-enabled tracepoints (tp_btf) need Linux 5.5 or later", h.release),
			Fix:  "record with ftrace instead (trace-cmd record -e sched, or tracefs) and read the text with schedlens",
		})
	}
	if !h.btf {
		ps = append(ps, Problem{
			What: "no kernel BTF: /sys/kernel/btf/vmlinux is missing (the kernel was built without CONFIG_DEBUG_INFO_BTF=y)",
			Fix:  "boot a kernel with CONFIG_DEBUG_INFO_BTF=y (most distributions ship one), or record with ftrace instead",
		})
	}
	if len(ps) > 0 {
		return &UnsupportedError{Problems: ps}
	}
	return nil
}

// kernelVersion parses the major and minor numbers of a release string
// such as "6.18.44-fc-v1045".
func kernelVersion(release string) (major, minor int, ok bool) {
	f := strings.FieldsFunc(release, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(f[0])
	b, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || !strings.HasPrefix(release, f[0]+".") {
		return 0, 0, false
	}
	return a, b, true
}
