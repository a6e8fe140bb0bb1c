package report

import (
	"bytes"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

func init() {
	// The library memoizes cell widths in a locked LRU cache. A table's
	// cells are mostly distinct numbers, so the cache costs more than it
	// saves: a quarter of a text table's time with it (a table of 5,000
	// tasks: 155 -> 115 ms).
	twwidth.SetCacheCapacity(0)
}

// Table is a header and rows of cells, rendered as plain text (for mail and
// terminals: no borders, a dashed rule under the header, two spaces between
// columns) or as a GitHub-flavoured markdown table.
type Table struct {
	Header []string
	Rows   [][]string
	// Left marks columns aligned left (names); the others are right-aligned
	// (numbers).
	Left []bool
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

func (t *Table) aligns() []tw.Align {
	a := make([]tw.Align, len(t.Header))
	for i := range a {
		a[i] = tw.AlignRight
		if i < len(t.Left) && t.Left[i] {
			a[i] = tw.AlignLeft
		}
	}
	return a
}

// Text renders the table as plain text.
func (t *Table) Text(w io.Writer) error {
	tbl := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{PerColumn: t.aligns()},
				Padding:    tw.CellPadding{Global: tw.Padding{Left: "", Right: " "}},
			},
			Row: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{PerColumn: t.aligns()},
				Padding:    tw.CellPadding{Global: tw.Padding{Left: "", Right: " "}},
			},
		}),
	)
	tbl.Header(anySlice(t.Header)...)
	for _, r := range t.Rows {
		if err := tbl.Append(anySlice(r)...); err != nil {
			return err
		}
	}
	return tbl.Render()
}

// Markdown renders the table as a markdown table. Every header and cell is
// escaped (MarkdownEscape): a comm "a|b|c" stays one cell, and HTML in a
// comm reaches no renderer as HTML.
func (t *Table) Markdown(w io.Writer) error {
	tbl := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{PerColumn: t.aligns()},
			},
			Row: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{PerColumn: t.aligns()},
			},
		}),
	)
	tbl.Header(escapedSlice(t.Header)...)
	for _, r := range t.Rows {
		if err := tbl.Append(escapedSlice(r)...); err != nil {
			return err
		}
	}
	return tbl.Render()
}

func escapedSlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = MarkdownEscape(v)
	}
	return out
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TextTable renders t as plain text with trailing blanks trimmed from every
// line (mail clients and patch tools dislike them).
func TextTable(w io.Writer, t *Table) error {
	var buf bytes.Buffer
	if err := t.Text(&buf); err != nil {
		return err
	}
	for _, line := range bytes.SplitAfter(buf.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		nl := bytes.HasSuffix(line, []byte("\n"))
		line = bytes.TrimRight(line, " \n")
		if _, err := w.Write(line); err != nil {
			return err
		}
		if nl {
			io.WriteString(w, "\n")
		}
	}
	return nil
}
