package topology

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxFile bounds a topology file; a 8192-CPU JSON file is about 1 MiB.
const maxFile = 16 << 20

// FileNames are the topology files looked for next to a trace, in order.
var FileNames = []string{"topology.json", "topology.txt"}

// Load reads a topology file: the JSON that Capture and WriteJSON produce,
// or a topology.txt snapshot (see ReadText). It sniffs the format: a file
// whose first non-blank byte is '{' is JSON. The result's Source is
// "file:"+path.
//
// When a sched-domains.txt (KernelFileName) sits in the same directory,
// Load reads it (ReadKernelView) and attaches it as Topology.Kernel: for
// a topology.txt its caches and clusters also give the LLCs and clusters,
// and its domains become those Domains returns. A JSON file that carries
// its own "kernel" section keeps it and ignores the neighbour.
func Load(path string) (*Topology, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	kvPath := filepath.Join(filepath.Dir(path), KernelFileName)
	kv, err := loadKernelView(kvPath)
	if err != nil {
		return nil, err
	}
	var t *Topology
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		t, err = ReadJSON(bytes.NewReader(data), path)
		if err == nil && kv != nil && t.Kernel == nil {
			if aerr := t.attachKernel(kv); aerr != nil {
				err = &ParseError{File: kvPath, Msg: aerr.Error(), Err: aerr}
			}
		}
	} else {
		t, err = readText(bytes.NewReader(data), path, kv, kvPath)
	}
	if err != nil {
		return nil, err
	}
	t.Source = "file:" + path
	return t, nil
}

// readLimited reads a file of at most maxFile bytes.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > maxFile {
		return nil, &ParseError{File: path, Msg: "file larger than 16 MiB: not a topology file", Err: ErrBadField}
	}
	return data, nil
}

// loadKernelView reads the kernel's view from path (a sched-domains.txt),
// or returns nil when there is no such regular file. Its Source is
// "file:"+path.
func loadKernelView(path string) (*KernelView, error) {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	kv, err := ReadKernelView(bytes.NewReader(data), path)
	if err != nil {
		return nil, err
	}
	kv.Source = "file:" + path
	return kv, nil
}

// ReadJSON reads a topology in the JSON form WriteJSON writes:
//
//	{
//	  "name": "sysfs",
//	  "cpus": [
//	    {"cpu": 0, "core": 0, "cluster": 0, "package": 0, "node": 0, "capacity": 1024},
//	    ...
//	  ],
//	  "node_distances": [[10, 21], [21, 10]]
//	}
//
// Unknown keys are errors (a misspelt "capcity" must not pass silently).
// CPUs may be listed in any order. The result is validated; its Source is
// what the file says.
func ReadJSON(r io.Reader, name string) (*Topology, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxFile {
		return nil, &ParseError{File: name, Msg: "file larger than 16 MiB: not a topology file", Err: ErrBadField}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var t Topology
	if err := dec.Decode(&t); err != nil {
		off := dec.InputOffset()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off = te.Offset
		}
		return nil, &ParseError{File: name, Line: lineAt(data, off), Msg: strings.TrimPrefix(err.Error(), "json: "), Err: fmt.Errorf("%w: %w", ErrBadField, err)}
	}
	if tok, err := dec.Token(); err != io.EOF {
		return nil, &ParseError{File: name, Line: lineAt(data, dec.InputOffset()), Msg: fmt.Sprintf("data after the topology object: %v", tok), Err: ErrBadField}
	}
	if t.CPUs == nil {
		return nil, &ParseError{File: name, Msg: `no "cpus" array`, Err: ErrBadField}
	}
	slices.SortStableFunc(t.CPUs, func(a, b CPU) int { return a.ID - b.ID })
	if err := t.Validate(); err != nil {
		return nil, &ParseError{File: name, Msg: err.Error(), Err: err}
	}
	markOfflineFromNotes(&t)
	return &t, nil
}

// markOfflineFromNotes sets CPU.Offline for the CPUs a capture's notes call
// offline ("cpu N was offline: ...", assemble's note), in a topology written
// before the flag existed (recordings of schedlens 2026-12-03 and older).
func markOfflineFromNotes(t *Topology) {
	for _, n := range t.Notes {
		rest, ok := strings.CutPrefix(n, "cpu ")
		if !ok {
			continue
		}
		id, rest, ok := strings.Cut(rest, " ")
		if !ok || !strings.HasPrefix(rest, "was offline:") {
			continue
		}
		if c, err := strconv.Atoi(id); err == nil && c >= 0 && c < len(t.CPUs) {
			t.CPUs[c].Offline = true
		}
	}
}

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

// WriteJSON writes t as indented JSON with one CPU per line (and one
// cache, cluster or kernel domain per line in the "kernel" section), the
// form ReadJSON and Load read back.
func WriteJSON(w io.Writer, t *Topology) error {
	var fields []string // rendered "key": value, without the trailing comma
	add := func(indent, key string, v any) error {
		enc, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fields = append(fields, fmt.Sprintf("%s%q: %s", indent, key, enc))
		return nil
	}
	if t.Name != "" {
		_ = add("  ", "name", t.Name)
	}
	_ = add("  ", "source", t.Source)
	cpus, err := jsonLines(t.CPUs, "    ")
	if err != nil {
		return err
	}
	fields = append(fields, `  "cpus": `+cpus)
	if t.NodeDistances != nil {
		if err := add("  ", "node_distances", t.NodeDistances); err != nil {
			return err
		}
	}
	if len(t.Notes) > 0 {
		if err := add("  ", "notes", t.Notes); err != nil {
			return err
		}
	}
	if k := t.Kernel; k != nil {
		outer := fields
		fields = nil
		if k.Release != "" {
			_ = add("    ", "release", k.Release)
		}
		if k.Source != "" {
			_ = add("    ", "source", k.Source)
		}
		for _, list := range []struct {
			key string
			v   any
			n   int
		}{{"caches", k.Caches, len(k.Caches)}, {"clusters", k.Clusters, len(k.Clusters)}, {"domains", k.Domains, len(k.Domains)}} {
			if list.n == 0 {
				continue
			}
			var body string
			switch v := list.v.(type) {
			case []CacheInfo:
				body, err = jsonLines(v, "      ")
			case []ClusterInfo:
				body, err = jsonLines(v, "      ")
			case []KernelDomain:
				body, err = jsonLines(v, "      ")
			}
			if err != nil {
				return err
			}
			fields = append(fields, fmt.Sprintf("    %q: %s", list.key, body))
		}
		inner := "{\n" + strings.Join(fields, ",\n") + "\n  }"
		if len(fields) == 0 {
			inner = "{}"
		}
		fields = append(outer, `  "kernel": `+inner)
	}
	_, err = io.WriteString(w, "{\n"+strings.Join(fields, ",\n")+"\n}\n")
	return err
}

// jsonLines renders a JSON array with one element per line, each line
// indented by indent and the closing bracket by two spaces less.
func jsonLines[T any](items []T, indent string) (string, error) {
	var b strings.Builder
	b.WriteString("[\n")
	for i, it := range items {
		enc, err := json.Marshal(it)
		if err != nil {
			return "", err
		}
		b.WriteString(indent)
		b.Write(enc)
		if i < len(items)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent[2:] + "]")
	return b.String(), nil
}

// FileNextTo returns the topology file that sits next to a trace: the
// first of FileNames in tracePath's directory, or in tracePath itself when
// it is a directory. It returns "" when there is none.
func FileNextTo(tracePath string) string {
	dir := tracePath
	if st, err := os.Stat(tracePath); err != nil || !st.IsDir() {
		dir = filepath.Dir(tracePath)
	}
	for _, n := range FileNames {
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// LoadOrPreset interprets a --topology argument: an existing file is
// loaded (Load), a directory is searched for a topology file (FileNextTo),
// anything else must be a preset name (Preset). A file wins over a preset
// of the same name.
func LoadOrPreset(arg string) (*Topology, error) {
	if st, err := os.Stat(arg); err == nil {
		if st.IsDir() {
			p := FileNextTo(arg)
			if p == "" {
				return nil, fmt.Errorf("directory %s holds no %s", arg, strings.Join(FileNames, " or "))
			}
			return Load(p)
		}
		return Load(arg)
	}
	t, err := Preset(arg)
	if err != nil {
		return nil, fmt.Errorf("%q is neither a file nor a preset: %w", arg, err)
	}
	return t, nil
}

// Resolve picks the topology for a trace. The sources, first match wins:
//
//  1. flag (--topology FILE|PRESET), when not empty: the user's explicit
//     choice beats everything, even a topology the trace carries;
//  2. fromTrace, the topology the trace itself carries (Perfetto system
//     info; parse.Meta.Topology), when it has CPUs; Source "trace";
//  3. a topology.json or topology.txt next to tracePath (FileNextTo);
//     Source "file:PATH";
//  4. ncpu identical CPUs (Symmetric); Source "default", with a note.
//
// ncpu is the trace's CPU count (0 if unknown). A topology with fewer CPUs
// than ncpu is an error, as is an invalid one; so is having no source at
// all with ncpu 0. fromTrace is not modified.
func Resolve(fromTrace *Topology, tracePath, flag string, ncpu int) (*Topology, error) {
	var t *Topology
	switch {
	case flag != "":
		var err error
		if t, err = LoadOrPreset(flag); err != nil {
			return nil, fmt.Errorf("--topology: %w", err)
		}
	case fromTrace != nil && len(fromTrace.CPUs) > 0:
		t = fromTrace.Clone()
		t.Source = "trace"
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("topology in the trace: %w (pass --topology FILE|PRESET to override it)", err)
		}
	default:
		if tracePath != "" {
			if p := FileNextTo(tracePath); p != "" {
				var err error
				if t, err = Load(p); err != nil {
					return nil, err
				}
			}
		}
		if t == nil {
			if ncpu <= 0 {
				return nil, errors.New("no topology: the trace carries none, no topology.json or topology.txt is next to it, and its CPU count is unknown; pass --topology FILE|PRESET")
			}
			if ncpu > maxCPUs {
				return nil, fmt.Errorf("the trace has %d CPUs, at most %d supported", ncpu, maxCPUs)
			}
			t = Symmetric(ncpu)
			t.Notes = append(t.Notes, fmt.Sprintf("no topology in the trace, next to it or from --topology: %d identical CPUs assumed (one core each, one LLC)", ncpu))
		}
	}
	if t.NCPU() < ncpu {
		return nil, fmt.Errorf("topology %s has %d CPUs but the trace has %d: pass --topology FILE|PRESET describing at least %d CPUs", t.Source, t.NCPU(), ncpu, ncpu)
	}
	return t, nil
}
