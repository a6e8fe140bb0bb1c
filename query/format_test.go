package query

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// TestWrite: every format of one result with a NULL, a HUGEINT (what
// DuckDB's sum() of a BIGINT returns), a float and text.
func TestWrite(t *testing.T) {
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	cols := []string{"comm", "run_ns", "share", "big"}
	rows := func() [][]any {
		return [][]any{{"hackbench", big.NewInt(3982782000), 0.25, huge}, {nil, int64(7), 1.0, nil}}
	}
	h := Header{SchemaVersion: 1, Command: "schedlens query d 'SELECT ...'", Version: "test", Dataset: "d", SQL: "SELECT ..."}
	var b bytes.Buffer
	if err := Write(&b, h, cols, rows(), "json"); err != nil {
		t.Fatal(err)
	}
	var loose struct {
		SQL  string  `json:"sql"`
		Rows [][]any `json:"rows"`
	}
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	if err := dec.Decode(&loose); err != nil {
		t.Fatal(err)
	}
	if loose.SQL != "SELECT ..." || loose.Rows[0][1] != json.Number("3982782000") || loose.Rows[0][3] != json.Number("123456789012345678901234567890") || loose.Rows[1][0] != nil {
		t.Errorf("json rows %v", loose.Rows)
	}
	for format, want := range map[string][]string{
		"text":     {"hackbench 3982782000", "NULL", "2 rows"},
		"markdown": {"| comm", "| hackbench | 3982782000 |"},
		"csv":      {"comm,run_ns,share,big\n", "hackbench,3982782000,0.25,123456789012345678901234567890\n", "\n,7,1,\n"},
		"html":     {"<table class=\"sortable\">", "<td class=\"l\">hackbench</td><td>3982782000</td>", "SELECT ..."},
	} {
		b.Reset()
		if err := Write(&b, h, cols, rows(), format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s lacks %q:\n%s", format, w, b.String())
			}
		}
	}
	if err := Write(&b, h, cols, nil, "xml"); err == nil {
		t.Error("format xml: no error")
	}
}
