package compare

import (
	"io"

	"github.com/schedlens/schedlens/report"
)

// Doc writes a report in the layout of compare's own reports (80-column
// text for a mail reply, or markdown), for the reports built on a
// comparison elsewhere (whatif): one layout for every comparison.
type Doc struct{ d writer }

// NewDoc returns a Doc writing to w, as markdown when md is true.
func NewDoc(w io.Writer, md bool) *Doc { return &Doc{d: writer{w: w, md: md}} }

// Markdown reports whether the document is markdown.
func (d *Doc) Markdown() bool { return d.d.md }

// Err returns the first write error.
func (d *Doc) Err() error { return d.d.err }

// Printf writes formatted text as it is.
func (d *Doc) Printf(format string, args ...any) { d.d.printf(format, args...) }

// Title starts a section; the first title of a document should be written
// with Heading.
func (d *Doc) Title(s string) { d.d.title(s) }

// Heading writes the document's title line and a blank line.
func (d *Doc) Heading(s string) {
	if d.d.md {
		d.d.printf("# %s\n\n", s)
	} else {
		d.d.printf("%s\n\n", s)
	}
}

// Fields writes aligned "key: value" lines.
func (d *Doc) Fields(rows [][2]string) { d.d.fields(rows) }

// Table writes a table and a blank line.
func (d *Doc) Table(t *report.Table) { d.d.table(t) }

// Defs writes one-line definitions under a table.
func (d *Doc) Defs(ls ...string) { d.d.defs(ls...) }

// Para writes a wrapped paragraph.
func (d *Doc) Para(s string) { d.d.para(s) }

// Lines writes short lines (a list in markdown).
func (d *Doc) Lines(ls []string) { d.d.lines(ls) }

// Item writes one wrapped line starting with prefix.
func (d *Doc) Item(prefix, s string) { d.d.item(prefix, s) }

// Name shortens a comm for a text table.
func (d *Doc) Name(s string) string { return d.d.name(s) }

// Footer writes the command line and the version.
func (d *Doc) Footer(command, version string) { d.d.footer(command, version) }

// TableRow is one row of the A/B tables: its label, metric, the divisor
// to its unit, and whether the per-scope tables show it.
type TableRow struct {
	Label, Metric string
	Div           float64
	Scoped        bool
}

// TableRows returns the rows of the A/B tables, in their order.
func TableRows() []TableRow {
	out := make([]TableRow, len(abRows))
	for i, r := range abRows {
		out[i] = TableRow{Label: r.label, Metric: r.metric, Div: r.div, Scoped: r.scoped}
	}
	return out
}

// FormatValue formats a figure in the unit div divides it to (1e6: ms),
// as the A/B tables do.
func FormatValue(v, div float64) string { return num(v, div) }

// FormatInterval formats a 95% interval of a change in percent as the A/B
// tables do ("[-1.23, +4.5]").
func FormatInterval(ci [2]float64) string { return ciCell(&Row{Tested: true, CI95: ci}) }

// Round rounds v to decimals places without a negative zero, as the JSON
// reports do.
func Round(v float64, decimals int) float64 { return zround(v, decimals) }
