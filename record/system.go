package record

import (
	"fmt"

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
