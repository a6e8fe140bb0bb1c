package compare

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/schedlens/schedlens/report"
)

// writer writes one report as plain text (report.Width columns, for a mail
// reply) or markdown. It keeps the first write error.
type writer struct {
	w   io.Writer
	md  bool
	err error
}

func (d *writer) printf(format string, args ...any) {
	if d.err != nil {
		return
	}
	_, d.err = fmt.Fprintf(d.w, format, args...)
}

// title starts a section: underlined in text, "##" in markdown.
func (d *writer) title(s string) {
	if d.md {
		d.printf("## %s\n\n", report.MarkdownEscape(s))
		return
	}
	d.printf("%s\n%s\n", s, strings.Repeat("-", utf8.RuneCountInString(s)))
}

// fields writes "key: value" lines with the values aligned and wrapped
// under themselves; a list in markdown.
func (d *writer) fields(rows [][2]string) {
	if d.md {
		for _, r := range rows {
			d.printf("- **%s**: %s\n", r[0], report.MarkdownEscape(r[1]))
		}
		d.printf("\n")
		return
	}
	kw := 0
	for _, r := range rows {
		kw = max(kw, utf8.RuneCountInString(r[0]))
	}
	for _, r := range rows {
		d.printf("%s\n", fold(r[1], fmt.Sprintf("%-*s", kw+2, r[0]+":"), report.Width))
	}
	d.printf("\n")
}

// table writes t and a blank line.
func (d *writer) table(t *report.Table) {
	if d.err != nil {
		return
	}
	if d.md {
		m := &report.Table{Header: t.Header, Left: t.Left}
		for _, r := range t.Rows {
			row := make([]string, len(r))
			for i, c := range r {
				row[i] = c // Markdown escapes
			}
			m.Rows = append(m.Rows, row)
		}
		d.err = m.Markdown(d.w)
	} else {
		d.err = report.TextTable(d.w, t)
	}
	d.printf("\n")
}

// defs writes one-line definitions under a table; in markdown in italics.
func (d *writer) defs(ls ...string) {
	for _, l := range ls {
		if d.md {
			d.printf("_%s_  \n", report.MarkdownEscape(l))
			continue
		}
		d.printf("%s\n", fold(l, "", report.Width))
	}
	d.printf("\n")
}

// para writes a wrapped paragraph and a blank line.
func (d *writer) para(s string) {
	if d.md {
		d.printf("%s\n\n", report.MarkdownEscape(s))
		return
	}
	d.printf("%s\n\n", fold(s, "", report.Width))
}

// lines writes short lines as they are, then a blank line; a list in
// markdown.
func (d *writer) lines(ls []string) {
	for _, l := range ls {
		if d.md {
			d.printf("- %s\n", report.MarkdownEscape(l))
		} else {
			d.printf("%s\n", fold(l, "", report.Width))
		}
	}
	d.printf("\n")
}

// item writes one wrapped line that starts with prefix, the rest indented
// under its text; a list item in markdown.
func (d *writer) item(prefix, s string) {
	if d.md {
		d.printf("- %s\n", report.MarkdownEscape(s))
		return
	}
	d.printf("%s\n", fold(s, prefix, report.Width))
}

// name shortens a comm for the text tables (markdown keeps it whole).
func (d *writer) name(s string) string {
	if !d.md && utf8.RuneCountInString(s) > 16 {
		return string([]rune(s)[:15]) + "*"
	}
	return s
}

// footer writes the command line (shell continuation lines in text) and
// the version.
func (d *writer) footer(command, version string) {
	if d.md {
		d.printf("command: `%s`  \nschedlens %s\n", command, version)
		return
	}
	d.printf("command: %s\nschedlens %s\n", foldCommand(command, report.Width-9), version)
}

// fold writes the words of text after first, breaking lines before a word
// that would end past width and indenting the next lines as wide as first.
// A word longer than a line stays whole.
func fold(text, first string, width int) string {
	var b strings.Builder
	b.WriteString(first)
	indent := strings.Repeat(" ", utf8.RuneCountInString(first))
	col := utf8.RuneCountInString(first)
	for i, w := range strings.Fields(text) {
		n := utf8.RuneCountInString(w)
		if i > 0 {
			if col+1+n > width {
				b.WriteString("\n" + indent)
				col = len(indent)
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

// foldCommand breaks a command line into shell continuation lines
// ("\" at the end, four spaces before the next part) of at most width
// columns after the "command: " prefix.
func foldCommand(line string, width int) string {
	var b strings.Builder
	col := 0
	for i, w := range strings.Fields(line) {
		n := utf8.RuneCountInString(w)
		if i > 0 {
			if col+1+n+2 > width {
				b.WriteString(" \\\n    ")
				col = 4
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}
