package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckHost(t *testing.T) {
	all := uint64(1)<<capSysAdmin | 1<<capBPF | 1<<capPerfmon
	tests := []struct {
		name string
		h    host
		want []string // substrings of the error, one per problem; nil = no error
	}{
		{"root", host{goos: "linux", euid: 0, capEff: all, capOK: true, btf: true, release: "6.18.44-fc-v1045"}, nil},
		{"bpf and perfmon only", host{goos: "linux", euid: 1000, capEff: 1<<capBPF | 1<<capPerfmon, capOK: true, btf: true, release: "5.15.0"}, nil},
		{"sys_admin only", host{goos: "linux", euid: 1000, capEff: 1 << capSysAdmin, capOK: true, btf: true, release: "5.6.0"}, nil},
		{"plain user", host{goos: "linux", euid: 1000, capOK: true, btf: true, release: "6.1.0"}, []string{"not privileged (uid 1000)", "setcap cap_bpf,cap_perfmon+ep"}},
		{"bpf without perfmon", host{goos: "linux", euid: 1000, capEff: 1 << capBPF, capOK: true, btf: true, release: "6.1.0"}, []string{"not privileged"}},
		{"root in a capless container", host{goos: "linux", euid: 0, capOK: true, btf: true, release: "6.1.0"}, []string{"root without CAP_BPF"}},
		{"caps unreadable, root", host{goos: "linux", euid: 0, btf: true, release: "6.1.0"}, nil},
		{"no BTF", host{goos: "linux", euid: 0, capEff: all, capOK: true, release: "6.1.0"}, []string{"no kernel BTF", "CONFIG_DEBUG_INFO_BTF"}},
		{"old kernel", host{goos: "linux", euid: 0, capEff: all, capOK: true, btf: true, release: "5.4.0-150-generic"}, []string{"kernel 5.4.0-150-generic is too old", "Linux 5.5"}},
		{"everything missing", host{goos: "linux", euid: 1000, capOK: true, release: "4.19.0"}, []string{"not privileged", "too old", "no kernel BTF"}},
		{"not linux", host{goos: "darwin", euid: 501}, []string{"recording needs Linux (this is darwin)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkHost(tc.h)
			if tc.want == nil {
				if err != nil {
					t.Errorf("checkHost = %v, want nil", err)
				}
				return
			}
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("checkHost = %v, want *UnsupportedError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if got, min := len(ue.Problems), len(tc.want); got > min {
				t.Errorf("%d problems, want at most %d: %v", got, min, err)
			}
		})
	}
}

func TestKernelVersion(t *testing.T) {
	tests := []struct {
		in       string
		maj, min int
		ok       bool
	}{
		{"6.18.44-fc-v1045", 6, 18, true},
		{"5.4.0-150-generic", 5, 4, true},
		{"5.10", 5, 10, true},
		{"4.19.0+", 4, 19, true},
		{"", 0, 0, false},
		{"v6.1", 0, 0, false},
		{"6", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			maj, min, ok := kernelVersion(tc.in)
			if maj != tc.maj || min != tc.min || ok != tc.ok {
				t.Errorf("kernelVersion(%q) = %d, %d, %v, want %d, %d, %v", tc.in, maj, min, ok, tc.maj, tc.min, tc.ok)
			}
		})
	}
}

func TestReadCapEff(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "status")
	if err := os.WriteFile(p, []byte("Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\nCapBnd:\t0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, ok := readCapEff(p)
	if !ok || got != 0x1fffeffffff {
		t.Errorf("readCapEff = %#x, %v, want 0x1fffeffffff, true", got, ok)
	}
	if _, ok := readCapEff(filepath.Join(dir, "missing")); ok {
		t.Errorf("readCapEff(missing) ok = true, want false")
	}
}

func TestWalkProc(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1/task/1/comm", "systemd\n")
	write("20/task/20/comm", "app\n")
	write("20/task/21/comm", "app worker\n")
	write("self/task/1/comm", "ignored\n")
	write("30/task/30/.keep", "") // exited between readdir and read: no comm
	write("meminfo", "x")
	var got []string
	err := walkProc(root, func(p procTask) error {
		got = append(got, fmt.Sprintf("%d %d %s", p.pid, p.tgid, p.comm))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "1 1 systemd|20 20 app|21 20 app worker"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("walkProc = %q, want %q", g, want)
	}
	if err := walkProc(filepath.Join(root, "none"), func(procTask) error { return nil }); err == nil {
		t.Errorf("walkProc(missing root) = nil, want an error")
	}
}
