package query

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/schedlens/schedlens/report"
)

// Formats are the output formats of Write.
var Formats = []string{"text", "markdown", "json", "csv", "html"}

// Header is the head of the JSON output, as every schedlens JSON document
// has one.
type Header struct {
	SchemaVersion int    `json:"schema_version"`
	Command       string `json:"command"`
	Version       string `json:"version"`
	Dataset       string `json:"dataset"`
	SQL           string `json:"sql"`
}

// Write prints the result: an aligned table (text), a markdown table, a
// JSON document (header, columns, rows; NULL as null), CSV (a header
// line, NULL as an empty field) or an HTML page with the sortable table.
func Write(w io.Writer, h Header, columns []string, rows [][]any, format string) error {
	switch format {
	case "text", "markdown", "html":
		t := &report.Table{Header: columns, Left: textColumns(len(columns), rows)}
		for _, r := range rows {
			cells := make([]string, len(r))
			for i, v := range r {
				cells[i] = Cell(v, "NULL")
			}
			t.Add(cells...)
		}
		if format == "html" {
			page := &report.HTMLPage{Title: "schedlens query: " + h.Dataset, Summary: []string{h.SQL, fmt.Sprintf("%d rows; command: %s; schedlens %s", len(rows), h.Command, h.Version)},
				Tables: []report.HTMLTable{{Title: "Result", Table: t}}}
			return page.Write(w)
		}
		if format == "markdown" {
			return t.Markdown(w)
		}
		if err := t.Text(w); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "%d rows\n", len(rows))
		return err
	case "json":
		out := rows
		if out == nil {
			out = [][]any{}
		}
		for _, r := range out {
			for i, v := range r {
				r[i] = jsonValue(v)
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Header
			Columns []string `json:"columns"`
			Rows    [][]any  `json:"rows"`
		}{h, columns, out})
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(columns); err != nil {
			return err
		}
		for _, r := range rows {
			cells := make([]string, len(r))
			for i, v := range r {
				cells[i] = Cell(v, "")
			}
			if err := cw.Write(cells); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	return fmt.Errorf("format %q: want one of text, markdown, json, csv, html", format)
}

// Cell formats one value: null for NULL, integers in full, floats in the
// shortest form that reads back the same, times in RFC 3339 with ns.
func Cell(v any, null string) string {
	switch x := v.(type) {
	case nil:
		return null
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case *big.Int: // HUGEINT, e.g. sum() of a BIGINT column
		return x.String()
	}
	return fmt.Sprint(v)
}

// jsonValue keeps what JSON can carry as itself and prints the rest.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int64, int32, uint64:
		return v
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Cell(v, "")
		}
		return v
	case []byte:
		return string(x)
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		return json.Number(x.String())
	}
	return Cell(v, "")
}

// textColumns marks the columns that hold text (any value that is not a
// number, bool or NULL): aligned left and sorted as text.
func textColumns(n int, rows [][]any) []bool {
	left := make([]bool, n)
	for _, r := range rows {
		for i, v := range r {
			switch v.(type) {
			case nil, int64, int32, uint64, float64, float32, bool, *big.Int:
			default:
				left[i] = true
			}
		}
	}
	return left
}
