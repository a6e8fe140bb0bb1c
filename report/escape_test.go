package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/schedlens/schedlens/metrics"
	"github.com/schedlens/schedlens/timeline"
)

// hostile are comms a traced program can give itself (prctl PR_SET_NAME
// takes any 15 bytes; Perfetto strings are longer).
var hostile = []string{"a|b|c", "<img src=x onerror=alert(1)>", `a\|b`, "`x`", "[x](javascript:y)", "a&lt;b", "**b**", "line\nbreak"}

// TestMarkdownTableEscapes: issue 16 item 6. Every cell of a markdown
// table is one cell whatever the comm holds, and no HTML tag gets
// through. Before, "a|b|c" made three cells and the <img> tag came out
// as it was.
func TestMarkdownTableEscapes(t *testing.T) {
	tb := &Table{Header: []string{"comm", "n"}, Left: []bool{true}}
	for _, c := range hostile {
		tb.Add(c, "1")
	}
	var b bytes.Buffer
	if err := tb.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2+len(hostile) {
		t.Fatalf("%d lines for %d rows:\n%s", len(lines), len(hostile), b.String())
	}
	for i, l := range lines {
		// Cell separators: pipes not escaped by a backslash (an escaped
		// backslash before a pipe leaves the pipe a separator).
		seps := 0
		var bare strings.Builder // l without its escaped characters
		for j := 0; j < len(l); j++ {
			switch l[j] {
			case '\\':
				j++ // the escaped character
				continue
			case '|':
				seps++
			}
			bare.WriteByte(l[j])
		}
		if seps != 3 {
			t.Errorf("line %d has %d cell separators, want 3: %s", i+1, seps, l)
		}
		if strings.ContainsAny(bare.String(), "<>`[]*") {
			t.Errorf("line %d lets markdown or HTML through: %s", i+1, l)
		}
	}
	if !strings.Contains(b.String(), "&amp;lt;b") {
		t.Errorf("an entity in a comm should stay literal text:\n%s", b.String())
	}
}

// TestReportMarkdownEscapes: the markdown lists (fields, notes) escape
// too, so a comm quoted in a warning cannot inject HTML.
func TestReportMarkdownEscapes(t *testing.T) {
	var b bytes.Buffer
	d := &doc{w: &b, md: true}
	d.fields([][2]string{{"trace", "<script>x</script>.txt"}})
	d.note("comm <b>|x")
	d.defs("a <i> b")
	if strings.ContainsAny(b.String(), "<>") {
		t.Errorf("HTML got through:\n%s", b.String())
	}
}

// TestSamplesCSVNeutralizesFormulas: a comm a spreadsheet would run as a
// formula gets an apostrophe; numbers (-1 for an absent time) stay as
// they are.
func TestSamplesCSVNeutralizesFormulas(t *testing.T) {
	strs := timeline.NewStrings()
	named := func(comm, waker string) metrics.Sample {
		return metrics.Sample{CommID: strs.IDString(comm), Waker: 1, WakerCommID: strs.IDString(waker)}
	}
	lat := &metrics.Latency{Strings: strs, Samples: []metrics.Sample{named("=HYPERLINK(\"http://x\")", "@SUM(A1)"), named("+1", "-2"), named("ok", "a=b")}}
	var b bytes.Buffer
	if err := WriteSamples(&b, lat, "csv"); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	want := [][2]string{{"'=HYPERLINK(\"http://x\")", "'@SUM(A1)"}, {"'+1", "'-2"}, {"ok", "a=b"}}
	for i, w := range want {
		r := rows[i+1]
		if r[col["comm"]] != w[0] || r[col["waker_comm"]] != w[1] {
			t.Errorf("row %d: comm %q waker_comm %q, want %q %q", i+1, r[col["comm"]], r[col["waker_comm"]], w[0], w[1])
		}
		if r[col["pid"]] != "0" || r[col["start_ns"]] != "0" {
			t.Errorf("row %d: numbers changed: %v", i+1, r)
		}
	}
}
