// Package export writes the analysis of traces as a Parquet dataset: one
// folder per table, partitioned by trace (TABLE/trace_id=ID/part-0.parquet),
// with the figures of the JSON outputs (metrics.Account, metrics.Analyze,
// timeline.Walk), zstd-compressed column chunks and the schema version in
// every file's metadata. docs/fleet.md describes the layout and the
// columns.
package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/schedlens/schedlens/affinity"
	"github.com/schedlens/schedlens/ingest"
	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/outfile"
	"github.com/schedlens/schedlens/timeline"
	"github.com/schedlens/schedlens/topology"
)

// Options of an export.
type Options struct {
	Lenient   bool   // skip malformed records (counted in traces.skipped_records)
	MaxEvents int64  // as ingest.Options.MaxEvents
	Version   string // the schedlens version, written into each file
	// Now returns the export time (traces.exported_at_ns); nil: time.Now.
	Now func() time.Time
}

// Result is what Export wrote for one trace.
type Result struct {
	ID     string           // the partition value: the first 16 bytes of SHA256, hex
	SHA256 string           // of the trace file's bytes as stored
	Rows   map[string]int64 // per table
	Bytes  int64            // on disk, all tables
	Events int              // events in the trace
}

// idLen is the length of a trace id in hex digits (64 bits of SHA-256:
// a collision among a million traces has odds of about 3e-8).
const idLen = 16

// batchRows is how many rows are handed to a writer at a time.
const batchRows = 4096

// HashFile returns the hex SHA-256 of the file at path.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ID is the partition value of a trace with the given hex SHA-256.
func ID(sha string) string {
	if len(sha) < idLen {
		return sha
	}
	return sha[:idLen]
}

// PartPath is the file of one table of one trace under the dataset root.
func PartPath(dir, table, id string) string {
	return filepath.Join(dir, table, "trace_id="+id, "part-0.parquet")
}

// Export loads the trace at path, analyses it over its valid window with
// its own topology (or the topology.txt beside it) and the inferred
// affinity, and writes every table's partition for it under dir. traces is
// written last: its file marks a complete export.
func Export(path, dir string, opts Options) (*Result, error) {
	sha, err := HashFile(path)
	if err != nil {
		return nil, err
	}
	ld, err := ingest.Load(path, ingest.Options{Name: path, Lenient: opts.Lenient, MaxEvents: opts.MaxEvents})
	if err != nil {
		return nil, err
	}
	return write(ld, sha, dir, opts)
}

// WriteFailure records in traces that the trace at path could not be
// exported, with its error. sha may be "" when the file could not be read:
// the id is then derived from the path.
func WriteFailure(path, sha, dir string, cause error, opts Options) (string, error) {
	row := TraceRow{Path: path, SHA256: sha, Error: cause.Error(), SchedlensVersion: opts.Version, ExportedAtNs: now(opts).UnixNano()}
	if fi, err := os.Stat(path); err == nil {
		row.SizeBytes = fi.Size()
	}
	id := sha
	if id == "" {
		s := sha256.Sum256([]byte("path:" + path))
		id = hex.EncodeToString(s[:])
	}
	id = ID(id)
	_, err := writeTable(dir, TableTraces, id, path, opts, func(w *parquet.GenericWriter[TraceRow]) (int64, error) {
		_, err := w.Write([]TraceRow{row})
		return 1, err
	})
	return id, err
}

func now(opts Options) time.Time {
	if opts.Now != nil {
		return opts.Now()
	}
	return time.Now()
}

func write(ld *ingest.Loaded, sha, dir string, opts Options) (*Result, error) {
	tl := ld.Timeline
	win := metrics.DefaultWindow(tl)
	topo, err := topology.Resolve(ld.Meta.Topology, ld.Path, "", tl.NCPU)
	if err != nil {
		return nil, err
	}
	// The affinity inference is fed by the analysis's walk (below), not
	// by a walk of its own.
	inf := affinity.NewInferrer(tl, affinity.InferOptions{})
	afterWalk := func() (*affinity.Map, error) { return affinity.Build(tl, affinity.BuildOptions{Inferred: inf}) }
	res := &Result{ID: ID(sha), SHA256: sha, Rows: map[string]int64{}, Events: tl.Len()}
	src := ld.Path
	// The runs table is written by the analysis' own walk, which is the
	// last to read the events: they are dropped once it ends.
	var an *metrics.Analysis
	var acc *metrics.Accounting
	var aerr error
	var nruns int64
	b, err := writeTable(dir, TableRuns, res.ID, src, opts, func(w *parquet.GenericWriter[RunRow]) (int64, error) {
		rs := &runSink{w: w, tl: tl, win: win, buf: make([]RunRow, 0, batchRows)}
		an, acc, aerr = metrics.AnalyzeAccount(tl, metrics.Options{Window: win, Topology: topo, AffinityAfter: afterWalk, Also: []metrics.Sink{rs, inf}, DropEvents: true})
		if aerr != nil {
			return 0, aerr
		}
		rs.flush()
		nruns = rs.n
		return rs.n, rs.err
	})
	if aerr != nil {
		return nil, aerr
	}
	res.Rows[TableRuns] = nruns
	res.Bytes += b
	if err != nil {
		return nil, err
	}

	if err := writeRows(res, dir, TableTasks, src, opts, len(acc.Tasks), func(i int) TaskRow { return taskRow(&acc.Tasks[i]) }); err != nil {
		return nil, err
	}
	if err := writeRows(res, dir, TableCPUs, src, opts, len(acc.CPUs), func(i int) CPURow { return cpuRow(&acc.CPUs[i], topo) }); err != nil {
		return nil, err
	}
	smp := an.Latency.Samples
	if err := writeRows(res, dir, TableWakeups, src, opts, len(smp), func(i int) WakeupRow { return wakeupRow(an.Latency, &smp[i]) }); err != nil {
		return nil, err
	}
	iw := an.Idle.Windows
	if err := writeRows(res, dir, TableIdleWindows, src, opts, len(iw), func(i int) IdleWindowRow { return idleRow(&iw[i]) }); err != nil {
		return nil, err
	}
	mt := an.Misplaced.Tasks
	if err := writeRows(res, dir, TableMisplaced, src, opts, len(mt), func(i int) MisplacedRow { return misplacedRow(&mt[i]) }); err != nil {
		return nil, err
	}
	tr := traceRow(ld, sha, win, acc, an, topo, opts)
	if fi, err := os.Stat(ld.Path); err == nil {
		tr.SizeBytes = fi.Size()
	}
	if err := writeRows(res, dir, TableTraces, src, opts, 1, func(int) TraceRow { return tr }); err != nil {
		return nil, err
	}
	return res, nil
}

// writeRows writes n rows made by row(i), in batches.
func writeRows[T any](res *Result, dir, table, src string, opts Options, n int, row func(int) T) error {
	b, err := writeTable(dir, table, res.ID, src, opts, func(w *parquet.GenericWriter[T]) (int64, error) {
		buf := make([]T, 0, min(n, batchRows))
		for i := 0; i < n; i++ {
			buf = append(buf, row(i))
			if len(buf) == cap(buf) || i == n-1 {
				if _, err := w.Write(buf); err != nil {
					return 0, err
				}
				buf = buf[:0]
			}
		}
		return int64(n), nil
	})
	res.Rows[table] = int64(n)
	res.Bytes += b
	return err
}

// runSink writes the running spans of a walk into the runs table as the
// walk closes them, a batch at a time (a metrics.Sink beside the analysis).
type runSink struct {
	w   *parquet.GenericWriter[RunRow]
	tl  *timeline.Timeline
	win metrics.Window
	buf []RunRow
	n   int64
	err error
}

// Events: the runs need only the spans.
func (r *runSink) Events(*timeline.Timeline) {}

// Span adds a run of a task that overlaps the window.
func (r *runSink) Span(s *timeline.Span) {
	tl := r.tl
	if s.State != timeline.SpanRunning || s.Task == timeline.NoTask || tl.Tasks[s.Task].Idle {
		return
	}
	d := clip(r.win, s.Start, s.End)
	if d <= 0 && (s.Start < r.win.Start || s.Start > r.win.End) {
		return // outside the window
	}
	tk := &tl.Tasks[s.Task]
	r.buf = append(r.buf, RunRow{Task: int32(s.Task), PID: int32(tk.PID), Comm: tl.Strings.Get(tk.Comm), CPU: int32(s.CPU),
		StartNs: int64(s.Start), EndNs: int64(s.End), RunNs: d, Open: s.Open()})
	r.n++
	if len(r.buf) == cap(r.buf) {
		r.flush()
	}
}

// flush writes the batch (after an error, drops it).
func (r *runSink) flush() {
	if r.err == nil && len(r.buf) > 0 {
		_, r.err = r.w.Write(r.buf)
	}
	r.buf = r.buf[:0]
}

// clip is the length of [s, e] inside the window, as metrics.Account
// counts it.
func clip(w metrics.Window, s, e timeline.Time) int64 {
	if s < w.Start {
		s = w.Start
	}
	if e > w.End {
		e = w.End
	}
	if e <= s {
		return 0
	}
	return int64(e - s)
}

// writeTable writes one partition file through outfile (atomic replace)
// and returns its size on disk.
func writeTable[T any](dir, table, id, src string, opts Options, fill func(*parquet.GenericWriter[T]) (int64, error)) (int64, error) {
	p := PartPath(dir, table, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return 0, err
	}
	var inputs []string
	if src != "" && src != "-" {
		inputs = []string{src}
	}
	f, err := outfile.Create(p, outfile.Options{Inputs: inputs})
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	cw := &countWriter{w: f}
	w := parquet.NewGenericWriter[T](cw,
		parquet.Compression(&parquet.Zstd),
		parquet.KeyValueMetadata(MetaSchemaVersion, SchemaVersion),
		parquet.KeyValueMetadata(MetaTable, table),
		parquet.KeyValueMetadata(MetaVersion, opts.Version),
		parquet.KeyValueMetadata(MetaUnits, "_ns columns: nanoseconds on the trace clock (exported_at_ns: Unix time); -1: absent"),
	)
	if _, err := fill(w); err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	if err := f.Commit(); err != nil {
		return 0, err
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func t64(t timeline.Time) int64 {
	if t == timeline.NoTime {
		return -1
	}
	return int64(t)
}

func taskRow(t *metrics.TaskTimes) TaskRow {
	return TaskRow{Task: int32(t.ID), PID: int32(t.PID), TGID: t.TGID, Comm: t.Comm, RunNs: t.RunNs, RunnableNs: t.RunnableNs,
		WakeupLatencyNs: t.WakeupLatencyNs, PreemptWaitNs: t.PreemptWaitNs, RqWaitNs: t.RqWaitNs, SleepNs: t.SleepNs,
		BlockedNs: t.BlockedNs, StoppedNs: t.StoppedNs, UnknownNs: t.UnknownNs, SwitchesIn: t.SwitchesIn, Preemptions: t.Preemptions,
		Wakeups: t.Wakeups, Migrations: t.Migrations, Inconsistencies: t.Inconsistencies, Censored: t.Censored}
}

func cpuRow(c *metrics.CPUTimes, topo *topology.Topology) CPURow {
	r := CPURow{CPU: int32(c.CPU), BusyNs: c.BusyNs, IdleNs: c.IdleNs, UnobservedNs: c.UnobservedNs, Switches: c.Switches,
		MigrationsIn: c.MigrationsIn, MigrationsOut: c.MigrationsOut, LostEvents: c.LostEvents, Gaps: int32(c.Gaps),
		Core: -1, Cluster: -1, Package: -1, Node: -1, Capacity: -1}
	if int(c.CPU) < topo.NCPU() {
		tc := topo.CPUs[c.CPU]
		r.Core, r.Cluster, r.Package, r.Node, r.Capacity = int32(tc.Core), int32(tc.Cluster), int32(tc.Package), int32(tc.Node), int32(tc.Capacity)
	}
	return r
}

func wakeupRow(lat *metrics.Latency, s *metrics.Sample) WakeupRow {
	ctx := ""
	if s.Kind != metrics.SamplePreempt {
		ctx = s.WakerCtx.String()
	}
	return WakeupRow{Task: int32(s.Task), Kind: s.Kind.String(), PID: int32(s.PID), Comm: lat.Comm(s), Prio: int32(s.Prio),
		Class: metrics.PrioClass(s.Prio), StartNs: t64(s.Start), WakeupNs: t64(s.Wakeup), SwitchInNs: t64(s.End), DurNs: s.DurNs,
		PlacementNs: s.PlacementNs(), QueueNs: s.QueueNs(), WakingCPU: int32(s.WakeCPU), TargetCPU: int32(s.TargetCPU),
		CPU: int32(s.CPU), WakerPID: int32(s.WakerPID), WakerComm: lat.WakerComm(s), WakerContext: ctx, IdleCPUNs: s.IdleCPUNs,
		Censored: s.Censored.String()}
}

func idleRow(w *metrics.IdleWindow) IdleWindowRow {
	return IdleWindowRow{CPU: int32(w.CPU), StartNs: int64(w.Start), DurNs: w.DurNs, Task: int32(w.Task), PID: int32(w.PID),
		Comm: w.Comm, WaitCPU: int32(w.WaitCPU), Relation: w.Relation.String(), Capacity: int32(w.Capacity),
		WaitCapacity: int32(w.WaitCapacity), Waiting: int32(w.Waiting), Affinity: w.Affinity.String(),
		QueueInferred: w.QueueInferred, Censored: w.Censored}
}

func misplacedRow(m *metrics.MisplacedTask) MisplacedRow {
	return MisplacedRow{Task: int32(m.Task), PID: int32(m.PID), Comm: m.Comm, WaitingWhileIdleNs: m.WaitingWhileIdleNs,
		WaitingWhileIdleCount: m.WaitingWhileIdleCount, MisfitNs: m.MisfitNs, MisfitCount: m.MisfitCount,
		SMTContendedNs: m.SMTContendedNs, SMTContendedCount: m.SMTContendedCount, PeakUtil: int32(m.PeakUtil),
		RunNs: m.RunNs, Affinity: m.Affinity.String()}
}

func traceRow(ld *ingest.Loaded, sha string, win metrics.Window, acc *metrics.Accounting, an *metrics.Analysis, topo *topology.Topology, opts Options) TraceRow {
	tl, m := ld.Timeline, ld.Meta
	gaps := 0
	for _, g := range tl.Gaps {
		if g.Kind == timeline.GapLost {
			gaps++
		}
	}
	var unobs int64
	for _, c := range acc.CPUs {
		unobs += c.UnobservedNs
	}
	var tj bytes.Buffer
	if err := topology.WriteJSON(&tj, topo); err != nil {
		tj.Reset()
	}
	warns := append([]string{}, m.Warnings...)
	warns = append(warns, an.Notes...)
	kernel, _, err := ingest.KernelRelease(ld, topo, ld.Path)
	if err != nil {
		warns = append(warns, fmt.Sprintf("kernel release: %v", err))
	}
	return TraceRow{
		Path: ld.Path, SHA256: sha, Format: m.Format, Compression: ld.Compression, Clock: m.Clock, Kernel: kernel,
		CPUs: int32(tl.NCPU), Events: int64(tl.Len()), LostEvents: tl.LostEvents, Gaps: int32(gaps),
		StartNs: int64(tl.Start), EndNs: int64(tl.End), ValidStartNs: int64(tl.ValidStart),
		ValidStartRule: tl.ValidStartRule.String(), ValidStartReason: tl.ValidStartReason,
		WindowStartNs: int64(win.Start), WindowEndNs: int64(win.End), UnobservedNs: unobs,
		Inconsistencies: int32(len(tl.Inconsistencies())), SkippedRecords: m.Skipped, UnknownEvents: m.UnknownEvents(),
		TopologySource: topo.Source, TopologyJSON: tj.String(), Warnings: warns,
		SchedlensVersion: opts.Version, ExportedAtNs: now(opts).UnixNano(),
	}
}
