package export

// The row types of the dataset's tables. Column names carry their unit
// (_ns: nanoseconds on the trace clock); -1 marks an absent time, CPU or
// pid, as in `latency --samples`. The partition column trace_id is not in
// the files: it is the folder name (trace_id=ID), which DuckDB and Spark
// read as a column. Field meanings are those of the JSON outputs
// (docs/metrics.md); docs/fleet.md lists them.

// SchemaVersion is written into every file's key-value metadata under
// MetaSchemaVersion; it changes when a column changes meaning or is
// removed (an added column keeps it).
const SchemaVersion = "1"

// Key-value metadata keys of every file.
const (
	MetaSchemaVersion = "schedlens.schema_version"
	MetaTable         = "schedlens.table"
	MetaVersion       = "schedlens.version"
	MetaUnits         = "schedlens.units"
)

// Table names, one folder each under the dataset root.
const (
	TableTraces      = "traces"
	TableTasks       = "tasks"
	TableCPUs        = "cpus"
	TableWakeups     = "wakeups"
	TableRuns        = "runs"
	TableIdleWindows = "idle_windows"
	TableMisplaced   = "misplaced"
)

// Tables lists every table in the order Export writes them (traces last:
// its file marks a complete export of the trace).
var Tables = []string{TableTasks, TableCPUs, TableWakeups, TableRuns, TableIdleWindows, TableMisplaced, TableTraces}

// TraceRow is one trace: what `tasks --format json` prints as "trace" and
// "window", the content hash, the topology, warnings, and the error of a
// trace that could not be exported (then the other columns are zero).
type TraceRow struct {
	Path             string   `parquet:"path"`
	SHA256           string   `parquet:"sha256"`
	SizeBytes        int64    `parquet:"size_bytes"`
	Format           string   `parquet:"format"`
	Compression      string   `parquet:"compression"`
	Clock            string   `parquet:"clock"`
	Kernel           string   `parquet:"kernel"`
	CPUs             int32    `parquet:"cpus"`
	Events           int64    `parquet:"events"`
	LostEvents       int64    `parquet:"lost_events"`
	Gaps             int32    `parquet:"gaps"`
	StartNs          int64    `parquet:"start_ns"`
	EndNs            int64    `parquet:"end_ns"`
	ValidStartNs     int64    `parquet:"valid_start_ns"`
	ValidStartRule   string   `parquet:"valid_start_rule"`
	ValidStartReason string   `parquet:"valid_start_reason"`
	WindowStartNs    int64    `parquet:"window_start_ns"`
	WindowEndNs      int64    `parquet:"window_end_ns"`
	UnobservedNs     int64    `parquet:"unobserved_ns"`
	Inconsistencies  int32    `parquet:"inconsistencies"`
	SkippedRecords   int64    `parquet:"skipped_records"`
	UnknownEvents    int64    `parquet:"unknown_events"`
	TopologySource   string   `parquet:"topology_source"`
	TopologyJSON     string   `parquet:"topology_json"`
	Warnings         []string `parquet:"warnings,list"`
	Error            string   `parquet:"error"`
	SchedlensVersion string   `parquet:"schedlens_version"`
	ExportedAtNs     int64    `parquet:"exported_at_ns"` // wall clock, Unix ns
}

// TaskRow is one task instance (pid plus lifetime) of `tasks`. task is the
// instance's number within the trace: the key that joins tasks, wakeups,
// runs, idle_windows and misplaced of one trace.
type TaskRow struct {
	Task            int32  `parquet:"task"`
	PID             int32  `parquet:"pid"`
	TGID            *int32 `parquet:"tgid,optional"`
	Comm            string `parquet:"comm"`
	RunNs           int64  `parquet:"run_ns"`
	RunnableNs      int64  `parquet:"runnable_ns"`
	WakeupLatencyNs int64  `parquet:"wakeup_latency_ns"`
	PreemptWaitNs   int64  `parquet:"preempt_wait_ns"`
	RqWaitNs        *int64 `parquet:"rq_wait_ns,optional"`
	SleepNs         int64  `parquet:"sleep_ns"`
	BlockedNs       int64  `parquet:"blocked_ns"`
	StoppedNs       int64  `parquet:"stopped_ns"`
	UnknownNs       int64  `parquet:"unknown_ns"`
	SwitchesIn      int64  `parquet:"switches_in"`
	Preemptions     int64  `parquet:"preemptions"`
	Wakeups         int64  `parquet:"wakeups"`
	Migrations      int64  `parquet:"migrations"`
	Inconsistencies int64  `parquet:"inconsistencies"`
	Censored        bool   `parquet:"censored"`
}

// CPURow is one CPU of `cpus`, with its topology.
type CPURow struct {
	CPU           int32 `parquet:"cpu"`
	BusyNs        int64 `parquet:"busy_ns"`
	IdleNs        int64 `parquet:"idle_ns"`
	UnobservedNs  int64 `parquet:"unobserved_ns"`
	Switches      int64 `parquet:"context_switches"`
	MigrationsIn  int64 `parquet:"migrations_in"`
	MigrationsOut int64 `parquet:"migrations_out"`
	LostEvents    int64 `parquet:"lost_events"`
	Gaps          int32 `parquet:"gaps"`
	Core          int32 `parquet:"core"`
	Cluster       int32 `parquet:"cluster"`
	Package       int32 `parquet:"package"`
	Node          int32 `parquet:"node"`
	Capacity      int32 `parquet:"capacity"`
}

// WakeupRow is one latency sample of `latency --samples` (a wakeup latency
// or a preemption wait, told by kind), censored ones included.
type WakeupRow struct {
	Task         int32  `parquet:"task"`
	Kind         string `parquet:"kind"` // wakeup, wakeup_new, preempt
	PID          int32  `parquet:"pid"`
	Comm         string `parquet:"comm"`
	Prio         int32  `parquet:"prio"`
	Class        string `parquet:"class"` // "nice N", "rt N", "unknown"
	StartNs      int64  `parquet:"start_ns"`
	WakeupNs     int64  `parquet:"wakeup_ns"`
	SwitchInNs   int64  `parquet:"switch_in_ns"`
	DurNs        int64  `parquet:"dur_ns"`
	PlacementNs  int64  `parquet:"placement_ns"`
	QueueNs      int64  `parquet:"queue_ns"`
	WakingCPU    int32  `parquet:"waking_cpu"`
	TargetCPU    int32  `parquet:"target_cpu"`
	CPU          int32  `parquet:"cpu"`
	WakerPID     int32  `parquet:"waker_pid"`
	WakerComm    string `parquet:"waker_comm"`
	WakerContext string `parquet:"waker_context"`
	IdleCPUNs    int64  `parquet:"idle_cpu_ns"`
	Censored     string `parquet:"censored"` // "" (complete), trace_end, gap, window
}

// RunRow is one on-CPU slice of a task (not the idle task): start_ns and
// end_ns as recorded, run_ns clipped to the window (the part tasks.run_ns
// sums).
type RunRow struct {
	Task    int32  `parquet:"task"`
	PID     int32  `parquet:"pid"`
	Comm    string `parquet:"comm"`
	CPU     int32  `parquet:"cpu"`
	StartNs int64  `parquet:"start_ns"`
	EndNs   int64  `parquet:"end_ns"`
	RunNs   int64  `parquet:"run_ns"`
	Open    bool   `parquet:"open"` // cut by the trace end, a gap or an inconsistency
}

// IdleWindowRow is one idle-with-runnable window of `idle`.
type IdleWindowRow struct {
	CPU           int32  `parquet:"cpu"`
	StartNs       int64  `parquet:"start_ns"`
	DurNs         int64  `parquet:"dur_ns"`
	Task          int32  `parquet:"task"`
	PID           int32  `parquet:"pid"`
	Comm          string `parquet:"comm"`
	WaitCPU       int32  `parquet:"wait_cpu"`
	Relation      string `parquet:"relation"`
	Capacity      int32  `parquet:"capacity"`
	WaitCapacity  int32  `parquet:"wait_capacity"`
	Waiting       int32  `parquet:"waiting"`
	Affinity      string `parquet:"affinity"`
	QueueInferred bool   `parquet:"queue_inferred"`
	Censored      bool   `parquet:"censored"`
}

// MisplacedRow is one task with misplaced time of `misplaced`.
type MisplacedRow struct {
	Task                  int32  `parquet:"task"`
	PID                   int32  `parquet:"pid"`
	Comm                  string `parquet:"comm"`
	WaitingWhileIdleNs    int64  `parquet:"waiting_while_idle_ns"`
	WaitingWhileIdleCount int64  `parquet:"waiting_while_idle_count"`
	MisfitNs              int64  `parquet:"misfit_ns"`
	MisfitCount           int64  `parquet:"misfit_count"`
	SMTContendedNs        int64  `parquet:"smt_contended_ns"`
	SMTContendedCount     int64  `parquet:"smt_contended_count"`
	PeakUtil              int32  `parquet:"peak_util"`
	RunNs                 int64  `parquet:"run_ns"`
	Affinity              string `parquet:"affinity"`
}
