package record

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/schedlens/schedlens/topology"
)

// System describes the machine a recording is made on, as the trace's
// system info records it.
type System struct {
	Kernel   string             // kernel release, uname -r
	Version  string             // kernel version string, uname -v
	Machine  string             // uname -m
	NCPU     int                // possible CPUs
	Topology *topology.Topology // from sysfs
	// Sysctls are the scheduler sysctls a replay models, as read when
	// recording starts ("kernel.sched_autogroup_enabled=1"); one the
	// kernel lacks (no CONFIG_SCHED_AUTOGROUP) is left out.
	Sysctls []string
}

// modeledSysctls are the sysctls (paths under /proc/sys) whose value
// changes what a replay models: with autogroups off, a task's autogroup
// has no effect on its scheduling.
var modeledSysctls = []string{"kernel/sched_autogroup_enabled"}

// readSysctls reads modeledSysctls under procSys (normally /proc/sys) as
// "kernel.name=value".
func readSysctls(procSys string) []string {
	var out []string
	for _, p := range modeledSysctls {
		b, err := os.ReadFile(filepath.Join(procSys, p))
		if err != nil {
			continue
		}
		out = append(out, strings.ReplaceAll(p, "/", ".")+"="+strings.TrimSpace(string(b)))
	}
	return out
}

// readSystem gathers System from uname and, through topology.Capture, the
// sysfs tree at sysRoot (normally "/sys").
func readSystem(sysRoot string, ncpu int) (System, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return System{}, fmt.Errorf("uname: %w", err)
	}
	s := System{
		Kernel:  unix.ByteSliceToString(u.Release[:]),
		Version: unix.ByteSliceToString(u.Version[:]),
		Machine: unix.ByteSliceToString(u.Machine[:]),
		NCPU:    ncpu,
		Sysctls: readSysctls("/proc/sys"),
	}
	t, err := topology.Capture(topology.Roots{Sys: sysRoot})
	if err != nil {
		// The events are worth more than the topology: record anyway.
		t = topology.Symmetric(ncpu)
		t.Notes = append(t.Notes, fmt.Sprintf("CPU topology unreadable (%v): taken as %d identical CPUs", err, ncpu))
	}
	s.Topology = t
	return s, nil
}
