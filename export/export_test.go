package export

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

const fixture = "../fixtures/real/qemu-juno-asym/trace.txt.zst"

// Every file carries the schema version and its table name in its
// metadata, and every column chunk is zstd-compressed.
func TestFilesMetadataAndCodec(t *testing.T) {
	dir := t.TempDir()
	res, err := Export(fixture, dir, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range Tables {
		p := PartPath(dir, table, res.ID)
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := fh.Stat()
		pf, err := parquet.OpenFile(fh, fi.Size())
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if v, _ := pf.Lookup(MetaSchemaVersion); v != SchemaVersion {
			t.Errorf("%s: schema version %q", table, v)
		}
		if v, _ := pf.Lookup(MetaTable); v != table {
			t.Errorf("%s: table %q", table, v)
		}
		if int64(pf.NumRows()) != res.Rows[table] {
			t.Errorf("%s: %d rows, Export said %d", table, pf.NumRows(), res.Rows[table])
		}
		for _, rg := range pf.Metadata().RowGroups {
			for _, c := range rg.Columns {
				if c.MetaData.Codec != format.Zstd {
					t.Errorf("%s.%s: codec %v", table, strings.Join(c.MetaData.PathInSchema, "."), c.MetaData.Codec)
				}
			}
		}
		fh.Close()
	}
	if res.Rows[TableTraces] != 1 || res.Rows[TableTasks] == 0 || res.Rows[TableRuns] == 0 {
		t.Errorf("rows %v", res.Rows)
	}
}

// A trace that cannot be exported leaves one traces row with its error
// under its content hash.
func TestWriteFailure(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/garbage.txt"
	if err := os.WriteFile(bad, []byte("not a trace\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	_, err := Export(bad, dir+"/ds", Options{})
	if err == nil {
		t.Fatal("garbage exported")
	}
	sha, _ := HashFile(bad)
	id, err2 := WriteFailure(bad, sha, dir+"/ds", err, Options{})
	if err2 != nil || id != ID(sha) {
		t.Fatalf("id %s, %v", id, err2)
	}
	rows, err3 := parquet.ReadFile[TraceRow](PartPath(dir+"/ds", TableTraces, id))
	if err3 != nil || len(rows) != 1 || rows[0].Error != err.Error() || rows[0].SHA256 != sha || rows[0].Path != bad {
		t.Fatalf("rows %+v, %v", rows, err3)
	}
	if _, err := os.Stat(PartPath(dir+"/ds", TableTasks, id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed trace has a tasks partition: %v", err)
	}
}

// A batch over a folder with a corrupt trace exports the others, records
// the corrupt one with its error, and a second run skips what was
// exported and retries only the failure.
func TestBatch(t *testing.T) {
	src := t.TempDir()
	good, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile("../fixtures/real/qemu-smt8-pingpong/trace.txt.zst")
	if err != nil {
		t.Fatal(err)
	}
	text := "# tracer: nop\n#\n          <idle>-0     [000] d..2.   100.000001: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=5 next_prio=120\n" +
		"               a-5     [000] d..2.   100.000002: sched_switch: prev_comm=a prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=zz\n"
	files := map[string][]byte{
		"h1/trace.txt.zst": good, "h2/trace.txt.zst": other, "h3/trace.txt": []byte(text),
		"h1/topology.txt.csv": []byte("a,b\n1,2\n"),
	}
	for name, b := range files {
		p := src + "/" + name
		if err := os.MkdirAll(p[:strings.LastIndex(p, "/")], 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	traces, others, err := Find(src)
	if err != nil || len(traces) != 3 || len(others) != 1 {
		t.Fatalf("Find: traces %v, others %v, %v", traces, others, err)
	}
	ds := t.TempDir()
	calls := 0
	out, err := Batch(traces, ds, BatchOptions{Jobs: 2, Progress: func(done, total int, o Outcome) { calls++ }})
	if err != nil || calls != 3 {
		t.Fatalf("Batch: %v, %d progress calls", err, calls)
	}
	if out[0].Err != nil || out[1].Err != nil || out[0].Result == nil || out[1].Result == nil {
		t.Fatalf("good traces: %+v %+v", out[0], out[1])
	}
	bad := out[2]
	if bad.Err == nil || !strings.Contains(bad.Err.Error(), "trace.txt:4: sched_switch: field next_prio") {
		t.Fatalf("corrupt trace: %+v", bad)
	}
	rows, err := parquet.ReadFile[TraceRow](PartPath(ds, TableTraces, bad.ID))
	if err != nil || len(rows) != 1 || rows[0].Error != bad.Err.Error() {
		t.Fatalf("traces row of the corrupt trace: %+v %v", rows, err)
	}
	out2, err := Batch(traces, ds, BatchOptions{Jobs: 1})
	if err != nil || !out2[0].Skipped || !out2[1].Skipped || out2[2].Skipped || out2[2].Err == nil {
		t.Fatalf("second run: %+v, %v", out2, err)
	}
}

// TestKernelFromMeta: a text trace does not carry its kernel release; the
// traces row takes it from meta.txt beside it (the capture's uname), as
// replay and whatif do.
func TestKernelFromMeta(t *testing.T) {
	dir := t.TempDir()
	res, err := Export("../fixtures/real/qemu-juno-asym/trace.txt.zst", dir, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.ReadFile[TraceRow](PartPath(dir, TableTraces, res.ID))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if rows[0].Kernel != "6.12.95+deb12-arm64" {
		t.Errorf("kernel %q, want 6.12.95+deb12-arm64 (meta.txt)", rows[0].Kernel)
	}
}
