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
