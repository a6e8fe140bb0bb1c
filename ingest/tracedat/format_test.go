package tracedat

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/ingest/parse"
	"github.com/schedlens/schedlens/timeline"
)

// The sched_switch format of ftrace-oracle-busy's kernel (6.18), as the
// file stores it, with next_pid's line replaced by repl.
func switchFormat(repl string) string {
	f := `name: sched_switch
ID: 372
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:char prev_comm[16];	offset:8;	size:16;	signed:0;
	field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
	field:int prev_prio;	offset:28;	size:4;	signed:1;
	field:long prev_state;	offset:32;	size:8;	signed:1;
	field:char next_comm[16];	offset:40;	size:16;	signed:0;
	NEXTPID
	field:int next_prio;	offset:60;	size:4;	signed:1;

print fmt: "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "|", { 0x00000001, "S" }, { 0x00000002, "D" }, { 0x00000004, "T" }, { 0x00000008, "t" }, { 0x00000010, "X" }, { 0x00000020, "Z" }, { 0x00000040, "P" }, { 0x00000080, "I" }) : "R", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio
`
	return strings.Replace(f, "NEXTPID", repl, 1)
}

func addSwitch(t *testing.T, text string) (*Reader, error) {
	r := &Reader{name: "t.dat", strs: timeline.NewStrings()}
	f, line, msg := parseFormat([]byte(text), nil)
	if msg != "" {
		t.Fatalf("line %d: %s", line, msg)
	}
	f.system = "sched"
	return r, r.addFormat(&cursor{r: r, section: "event formats"}, 2063, f)
}

func TestSwitchFormat(t *testing.T) {
	r, err := addSwitch(t, switchFormat("field:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;"))
	if err != nil {
		t.Fatal(err)
	}
	d := r.dec[372]
	if d == nil || d.f[5].off != 56 || d.f[5].size != 4 || !d.f[5].signed || d.f[3].off != 32 || d.f[3].size != 8 {
		t.Fatalf("decoder %+v: want next_pid at 56 (4, signed), prev_state at 32 (8)", d)
	}
	// prev_state by the kernel's table: 0x80 is I, 0x100 (TASK_REPORT_MAX) R+,
	// 0x20 Z, 0x1 S, 0 R.
	for v, want := range map[uint64]string{0: "R", 0x1: "S", 0x2: "D", 0x20: "Z", 0x10: "X", 0x80: "I", 0x100: "R+", 0x3: "S|D"} {
		if got := d.state(v).String(); got != want {
			t.Errorf("prev_state %#x = %s, want %s", v, got, want)
		}
	}
	_, err = addSwitch(t, switchFormat(""))
	var pe *parse.ParseError
	if !errors.As(err, &pe) || pe.Offset != 2063 || !strings.Contains(pe.Msg, "want a field next_pid") {
		t.Errorf("format without next_pid: %v; want a positioned error naming next_pid", err)
	}
	_, err = addSwitch(t, switchFormat("field:pid_t next_pid;\toffset:56;\tsize:3;\tsigned:1;"))
	if err == nil || !strings.Contains(err.Error(), "want an integer of 1, 2, 4 or 8 bytes, got size 3") {
		t.Errorf("3-byte next_pid: %v", err)
	}
}
