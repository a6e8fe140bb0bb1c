package record

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/timeline"
)

// fakeCgroupFS lays out a cgroup tree (mounted at dir/cg with mountinfo
// root mroot) and a /proc under dir/proc, and returns the resolver and the
// inode numbers, which stand for cgroup ids, of the tree's directories.
func fakeCgroupFS(t *testing.T, mroot string) (*cgroupFS, map[string]uint64) {
	t.Helper()
	dir := t.TempDir()
	cg := filepath.Join(dir, "c g")
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(cg, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cg, "a/b/cpu.weight"), "250\n")
	write(filepath.Join(cg, "c/cpu.weight"), "max\n")
	mountPoint := strings.ReplaceAll(cg, " ", `\040`)
	write(filepath.Join(dir, "proc/self/mountinfo"),
		"22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw\n"+
			fmt.Sprintf("35 22 0:30 %s %s rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n", mroot, mountPoint))
	write(filepath.Join(dir, "proc/42/cgroup"), "0::"+filepath.Join(mroot, "a/b")+"\n")
	write(filepath.Join(dir, "proc/43/cgroup"), "1:cpu:/x\n0::"+filepath.Join(mroot, "c")+"\n")
	ids := map[string]uint64{}
	for _, d := range []string{"", "a", "a/b", "c"} {
		ino, ok := inode(filepath.Join(cg, d))
		if !ok {
			t.Fatal("no inode")
		}
		ids["/"+d] = ino
	}
	c := newCgroupFS(filepath.Join(dir, "proc"))
	if c.mount != cg || c.prefix != mroot {
		t.Fatalf("mount %q root %q, want %q %q", c.mount, c.prefix, cg, mroot)
	}
	return c, ids
}

// TestCgroupFS resolves cgroup ids (directory inode numbers) to paths: from
// the task's /proc/PID/cgroup when it names that cgroup, else by walking
// the hierarchy; an id no directory has is unknown and walked for once.
// cpu.weight is read where the file holds a weight (1-10000), else 0.
func TestCgroupFS(t *testing.T) {
	for _, mroot := range []string{"/", "/ns"} {
		t.Run("root "+mroot, func(t *testing.T) {
			c, ids := fakeCgroupFS(t, mroot)
			full := func(p string) string {
				if mroot == "/" {
					return p
				}
				return filepath.Join(mroot, p)
			}
			tests := []struct {
				pid    int
				id     uint64
				path   string
				weight int
			}{
				{42, ids["/a/b"], full("/a/b"), 250}, // /proc names it
				{43, ids["/c"], full("/c"), 0},       // cpu.weight "max" is no weight
				{42, ids["/a"], full("/a"), 0},       // moved since: found by walking
				{99, ids["/"], full("/"), 0},         // no /proc entry: walk
				{42, 1 << 60, "", 0},                 // no such cgroup
				{42, 0, "", 0},                       // id unknown
			}
			for _, tc := range tests {
				p, w := c.resolve(timeline.TID(tc.pid), tc.id)
				if p != tc.path || w != tc.weight {
					t.Errorf("resolve(%d, %d) = %q, %d; want %q, %d", tc.pid, tc.id, p, w, tc.path, tc.weight)
				}
			}
			if !c.walked[1<<60] || len(c.walked) != 1 {
				t.Errorf("ids walked for in vain: %v, want only the unknown one", c.walked)
			}
			// A weight is read anew each time.
			if err := os.WriteFile(filepath.Join(c.mount, "a/b/cpu.weight"), []byte("80\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if p, w := c.resolve(7, ids["/a/b"]); p != full("/a/b") || w != 80 {
				t.Errorf("after writing cpu.weight: %q, %d; want %q, 80", p, w, full("/a/b"))
			}
		})
	}
}

// TestCgroupFSNone: without a cgroup2 mount nothing is known.
func TestCgroupFSNone(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "self/mountinfo"), []byte("30 22 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCgroupFS(dir)
	if p, w := c.resolve(1, 1); p != "" || w != 0 {
		t.Errorf("resolve = %q, %d; want unknown", p, w)
	}
}
