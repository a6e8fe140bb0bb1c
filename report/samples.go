package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// SampleColumns are the fields of every sample, in CSV column order and
// as JSON keys. Times are ns on the trace clock; -1 marks an absent time,
// CPU or pid.
var SampleColumns = []string{
	"kind", "pid", "comm", "prio", "start_ns", "wakeup_ns", "switch_in_ns", "dur_ns", "placement_ns", "queue_ns",
	"waking_cpu", "target_cpu", "cpu", "waker_pid", "waker_comm", "waker_context", "idle_cpu_ns", "censored", "exactness",
}

// WriteSamples writes every sample, as CSV with a header row ("csv") or
// as one JSON object per line ("jsonl").
func WriteSamples(w io.Writer, lat *metrics.Latency, format string) error {
	samples := lat.Samples
	bw := bufio.NewWriterSize(w, 64<<10)
	switch format {
	case "csv":
		cw := csv.NewWriter(bw)
		if err := cw.Write(SampleColumns); err != nil {
			return err
		}
		for i := range samples {
			if err := cw.Write(sampleRow(lat, &samples[i])); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	case "jsonl":
		enc := json.NewEncoder(bw)
		for i := range samples {
			if err := enc.Encode(sampleJSON(lat, &samples[i])); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("samples format %q: want csv or jsonl", format)
	}
	return bw.Flush()
}

func t64(t timeline.Time) int64 {
	if t == timeline.NoTime {
		return -1
	}
	return int64(t)
}

func sampleRow(lat *metrics.Latency, s *metrics.Sample) []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{
		s.Kind.String(), i(int64(s.PID)), CSVCell(lat.Comm(s)), i(int64(s.Prio)), i(t64(s.Start)), i(t64(s.Wakeup)), i(t64(s.End)), i(s.DurNs),
		i(s.PlacementNs()), i(s.QueueNs()), i(int64(s.WakeCPU)), i(int64(s.TargetCPU)), i(int64(s.CPU)), i(int64(s.WakerPID)), CSVCell(lat.WakerComm(s)),
		ctxName(s), i(s.IdleCPUNs), s.Censored.String(), s.Exactness().String(),
	}
}

func ctxName(s *metrics.Sample) string {
	if s.Kind == metrics.SamplePreempt {
		return ""
	}
	return s.WakerCtx.String()
}

// sampleLine is the JSON form, keys as SampleColumns.
type sampleLine struct {
	Kind        string       `json:"kind"`
	PID         timeline.TID `json:"pid"`
	Comm        string       `json:"comm"`
	Prio        int16        `json:"prio"`
	StartNs     int64        `json:"start_ns"`
	WakeupNs    int64        `json:"wakeup_ns"`
	SwitchInNs  int64        `json:"switch_in_ns"`
	DurNs       int64        `json:"dur_ns"`
	PlacementNs int64        `json:"placement_ns"`
	QueueNs     int64        `json:"queue_ns"`
	WakingCPU   timeline.CPU `json:"waking_cpu"`
	TargetCPU   timeline.CPU `json:"target_cpu"`
	CPU         timeline.CPU `json:"cpu"`
	WakerPID    timeline.TID `json:"waker_pid"`
	WakerComm   string       `json:"waker_comm"`
	WakerCtx    string       `json:"waker_context"`
	IdleCPUNs   int64        `json:"idle_cpu_ns"`
	Censored    string       `json:"censored"`
	Exactness   string       `json:"exactness"`
}

func sampleJSON(lat *metrics.Latency, s *metrics.Sample) sampleLine {
	return sampleLine{s.Kind.String(), s.PID, lat.Comm(s), s.Prio, t64(s.Start), t64(s.Wakeup), t64(s.End), s.DurNs, s.PlacementNs(), s.QueueNs(),
		s.WakeCPU, s.TargetCPU, s.CPU, s.WakerPID, lat.WakerComm(s), ctxName(s), s.IdleCPUNs, s.Censored.String(), s.Exactness().String()}
}
