package record

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedlens/schedlens/timeline"
)

// TestRecordSignal records timeout(1) killing a busy loop: the trace holds
// the SIGTERM that timeout sent its child (delivered: result 0, a group
// signal, timeout as the sender), and the scheduler sysctls the recorder
// read as it started.
func TestRecordSignal(t *testing.T) {
	tools := needRecord(t, "timeout", "sh")
	r, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "timeout.pftrace")
	cmd := exec.Command(tools[0], "0.2", tools[1], "-c", "while :; do :; done")
	var done chan error
	_, err = r.WriteFile(ctx, path, nil, FileOptions{}, func() error {
		if err := cmd.Start(); err != nil {
			return err
		}
		done = make(chan error, 1)
		go func() { done <- cmd.Wait(); cancel() }()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	evs, rd := readTrace(t, path)
	strs := rd.Strings()
	timeoutPID := timeline.TID(cmd.Process.Pid)
	var found bool
	for _, ev := range evs {
		if ev.Kind == timeline.KindSignal && ev.Arg == 15 && ev.Other == timeoutPID && ev.Arg2 == 1<<8 && strs.Get(ev.Comm) == "sh" {
			found = true
		}
	}
	if !found {
		t.Errorf("no delivered group SIGTERM from timeout (pid %d) to sh among %d events", timeoutPID, len(evs))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/sched_autogroup_enabled"); err == nil {
		want := "kernel.sched_autogroup_enabled=" + strings.TrimSpace(string(b))
		if got := rd.Meta().Sysctls; !slices.Contains(got, want) {
			t.Errorf("sysctls %q, want %q", got, want)
		}
	}
}
