package record

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/schedlens/schedlens/timeline"
)

// procTask is one thread found under /proc.
type procTask struct {
	pid  timeline.TID
	tgid int32
	comm string
}

// walkProc lists every thread under root (normally "/proc"): each
// root/TGID/task/TID with its comm. Tasks that exit during the walk are
// skipped; only an unreadable root is an error.
func walkProc(root string, fn func(procTask) error) error {
	procs, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, p := range procs {
		tgid, err := strconv.Atoi(p.Name())
		if err != nil || tgid <= 0 {
			continue
		}
		tasks, err := os.ReadDir(filepath.Join(root, p.Name(), "task"))
		if err != nil {
			continue // exited, or a kernel without task dirs
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || tid <= 0 {
				continue
			}
			comm, err := os.ReadFile(filepath.Join(root, p.Name(), "task", t.Name(), "comm"))
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				continue
			} else if err != nil {
				continue
			}
			if err := fn(procTask{pid: timeline.TID(tid), tgid: int32(tgid), comm: string(bytes.TrimRight(comm, "\n"))}); err != nil {
				return err
			}
		}
	}
	return nil
}
