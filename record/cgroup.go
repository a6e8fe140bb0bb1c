package record

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/schedlens/schedlens/timeline"
)

// groupResolver names the cgroup a task is in and reads its cpu.weight.
type groupResolver interface {
	// resolve returns the cgroup v2 path of cgroup id (which task pid was
	// in when the kernel reported it; "/" is the root, "" unknown) and its
	// cpu.weight (0 when unknown or when the cpu controller is off there).
	resolve(pid timeline.TID, id uint64) (path string, weight int)
}

// cgroupFS resolves cgroup ids through a mounted cgroup v2 hierarchy.
//
// A cgroup's id is its kernfs node id (kn->id), which on 64-bit kernels is
// also the inode number of its directory in cgroupfs (kernfs_ino; 32-bit
// kernels show the low 32 bits). The task's own /proc/PID/cgroup line
// ("0::/path") names the cgroup when the task has not moved since; else the
// hierarchy is walked to find the directory with that inode. Paths are
// kept per id; cpu.weight is read each time, as it may change.
type cgroupFS struct {
	proc   string // normally "/proc"
	mount  string // where the v2 hierarchy is mounted; "" if nowhere
	prefix string // the hierarchy path of that mount's root ("/" normally)
	paths  map[uint64]string
	walked map[uint64]bool // ids a walk did not find (removed cgroups)
}

// newCgroupFS finds the cgroup v2 mount in procRoot/self/mountinfo.
func newCgroupFS(procRoot string) *cgroupFS {
	c := &cgroupFS{proc: procRoot, paths: map[uint64]string{}, walked: map[uint64]bool{}}
	f, err := os.Open(filepath.Join(procRoot, "self", "mountinfo"))
	if err != nil {
		return c
	}
	defer f.Close()
	c.mount, c.prefix = findCgroup2(bufio.NewScanner(f))
	return c
}

// findCgroup2 returns the mount point and the root of the first cgroup2
// mount of a mountinfo file (proc(5): ID PARENT MAJ:MIN ROOT MOUNTPOINT
// OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS).
func findCgroup2(sc *bufio.Scanner) (mount, root string) {
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(f) || f[sep+1] != "cgroup2" {
			continue
		}
		return unescapeMount(f[4]), unescapeMount(f[3])
	}
	return "", ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (c *cgroupFS) resolve(pid timeline.TID, id uint64) (string, int) {
	if c.mount == "" || id == 0 {
		return "", 0
	}
	id = idKey(id)
	rel, ok := c.paths[id]
	if !ok {
		rel, ok = c.fromProc(pid, id)
	}
	if !ok && !c.walked[id] {
		c.walk()
		rel, ok = c.paths[id]
		if !ok {
			c.walked[id] = true
		}
	}
	if !ok {
		return "", 0
	}
	return c.hierarchyPath(rel), c.weight(rel)
}

// fromProc names cgroup id from the task's /proc/PID/cgroup if the
// directory it names has that id.
func (c *cgroupFS) fromProc(pid timeline.TID, id uint64) (string, bool) {
	b, err := os.ReadFile(filepath.Join(c.proc, strconv.Itoa(int(pid)), "cgroup"))
	if err != nil {
		return "", false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		p, ok := bytes.CutPrefix(line, []byte("0::"))
		if !ok {
			continue
		}
		rel := c.relative(string(p))
		if ino, ok := inode(filepath.Join(c.mount, rel)); ok && idKey(ino) == id {
			c.paths[id] = rel
			return rel, true
		}
	}
	return "", false
}

// walk maps the id of every cgroup under the mount to its path.
func (c *cgroupFS) walk() {
	filepath.WalkDir(c.mount, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if ino, ok := inode(p); ok {
			rel, err := filepath.Rel(c.mount, p)
			if err != nil {
				return nil
			}
			if rel == "." {
				rel = ""
			}
			c.paths[idKey(ino)] = "/" + filepath.ToSlash(rel)
		}
		return nil
	})
}

// relative turns a /proc/PID/cgroup path (relative to the reader's cgroup
// namespace, which is the mount's root for a mount made in it) into a path
// under the mount.
func (c *cgroupFS) relative(p string) string {
	if c.prefix != "" && c.prefix != "/" {
		if r, ok := strings.CutPrefix(p, c.prefix); ok && (r == "" || r[0] == '/') {
			p = r
		}
	}
	if p == "" {
		p = "/"
	}
	return path.Clean(p)
}

// hierarchyPath is the cgroup's path from the hierarchy root: the mount's
// root joined with the path under the mount.
func (c *cgroupFS) hierarchyPath(rel string) string {
	if c.prefix == "" || c.prefix == "/" {
		return rel
	}
	return path.Join(c.prefix, rel)
}

// weight reads cpu.weight of the cgroup at rel under the mount; 0 if the
// file is absent (the root, or the cpu controller is off there).
func (c *cgroupFS) weight(rel string) int {
	b, err := os.ReadFile(filepath.Join(c.mount, rel, "cpu.weight"))
	if err != nil {
		return 0
	}
	w, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || w < 1 || w > 10000 {
		return 0
	}
	return w
}

func inode(p string) (uint64, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return 0, false
	}
	return uint64(st.Ino), true
}

// idKey is what a cgroup id and its directory's inode number have in
// common: all 64 bits, or the low 32 where inode numbers have 32 bits.
func idKey(x uint64) uint64 {
	if strconv.IntSize == 32 {
		return uint64(uint32(x))
	}
	return x
}
