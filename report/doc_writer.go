package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Width is the column limit of the text form: it must read well quoted in
// a mail reply.
const Width = 80

// wrapWidth leaves room for one level of "> " quoting.
const wrapWidth = 78

// doc writes one report as plain text or markdown: the same sections,
// tables and notes in either form. It keeps the first write error.
type doc struct {
	w   io.Writer
	md  bool
	err error
}

func (d *doc) printf(format string, args ...any) {
	if d.err != nil {
		return
	}
	_, d.err = fmt.Fprintf(d.w, format, args...)
}

// title starts a section: underlined in text, "##" in markdown.
func (d *doc) title(s string) {
	if d.md {
		d.printf("## %s\n\n", MarkdownEscape(s))
		return
	}
	d.printf("%s\n%s\n", s, strings.Repeat("-", utf8.RuneCountInString(s)))
}

// heading is a document title.
func (d *doc) heading(s string) {
	if d.md {
		d.printf("# %s\n\n", MarkdownEscape(s))
		return
	}
	d.printf("%s\n%s\n", s, strings.Repeat("=", min(utf8.RuneCountInString(s), wrapWidth)))
}

// para writes a wrapped paragraph and a blank line.
func (d *doc) para(s string) {
	if d.md {
		d.printf("%s\n\n", MarkdownEscape(s))
		return
	}
	for _, l := range wrap(s, wrapWidth, "") {
		d.printf("%s\n", l)
	}
	d.printf("\n")
}

// lines writes a block of short lines as they are (no wrapping), then a
// blank line; in markdown as a list.
func (d *doc) lines(ls []string) {
	for _, l := range ls {
		if d.md {
			d.printf("- %s\n", MarkdownEscape(l))
		} else {
			d.printf("%s\n", l)
		}
	}
	d.printf("\n")
}

// fields writes "key  value" pairs with the values aligned; long values
// wrap under themselves. In markdown, a two-column table.
func (d *doc) fields(rows [][2]string) {
	if d.md {
		for _, r := range rows {
			d.printf("- **%s**: %s\n", r[0], MarkdownEscape(r[1]))
		}
		d.printf("\n")
		return
	}
	kw := 0
	for _, r := range rows {
		kw = max(kw, utf8.RuneCountInString(r[0]))
	}
	pad := strings.Repeat(" ", kw+2)
	for _, r := range rows {
		ls := wrap(r[1], wrapWidth-kw-2, "")
		for i, l := range ls {
			if i == 0 {
				d.printf("%-*s  %s\n", kw, r[0], l)
			} else {
				d.printf("%s%s\n", pad, l)
			}
		}
		if len(ls) == 0 {
			d.printf("%s\n", r[0])
		}
	}
	d.printf("\n")
}

// table writes t and a blank line.
func (d *doc) table(t *Table) {
	if d.err != nil {
		return
	}
	if d.md {
		m := &Table{Header: t.Header, Left: t.Left}
		for _, r := range t.Rows {
			row := make([]string, len(r))
			for i, c := range r {
				row[i] = strings.TrimSpace(c) // Markdown escapes
			}
			m.Rows = append(m.Rows, row)
		}
		d.err = m.Markdown(d.w)
		d.printf("\n")
		return
	}
	d.err = plainTable(d.w, t)
}

// note writes a definition or remark under a table: wrapped, then a blank
// line; in markdown in italics.
func (d *doc) note(s string) {
	if d.md {
		d.printf("_%s_\n\n", MarkdownEscape(strings.TrimSpace(s)))
		return
	}
	d.para(s)
}

// defs writes one-line definitions under a table, each on its own line
// (wrapped only if longer than the text width); in markdown in italics.
func (d *doc) defs(ls ...string) {
	for _, l := range ls {
		if d.md {
			d.printf("_%s_  \n", MarkdownEscape(strings.TrimSpace(l)))
			continue
		}
		if len([]rune(l)) <= wrapWidth {
			d.printf("%s\n", l)
			continue
		}
		for _, x := range wrap(l, wrapWidth, "  ") {
			d.printf("%s\n", x)
		}
	}
	d.printf("\n")
}

// pre writes preformatted lines (a histogram); a code block in markdown.
func (d *doc) pre(ls []string) {
	if d.md {
		d.printf("```\n")
	}
	for _, l := range ls {
		d.printf("%s\n", l)
	}
	if d.md {
		d.printf("```\n")
	}
	d.printf("\n")
}

// wrap breaks s into lines of at most width runes at spaces; a word longer
// than width stands alone. indent prefixes every line but the first.
func wrap(s string, width int, indent string) []string {
	var out []string
	var cur strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		wl := utf8.RuneCountInString(w)
		if n > 0 && n+1+wl > width {
			out = append(out, cur.String())
			cur.Reset()
			cur.WriteString(indent)
			n = utf8.RuneCountInString(indent)
		} else if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(w)
		n += wl
	}
	if n > 0 {
		out = append(out, cur.String())
	}
	return out
}

// plainTable renders t for mail: columns two spaces apart, names left and
// numbers right-aligned (headers too), a dashed rule under the header, no
// trailing blanks, then a blank line.
func plainTable(w io.Writer, t *Table) error {
	ncol := len(t.Header)
	width := make([]int, ncol)
	for i, h := range t.Header {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.Rows {
		for i := 0; i < ncol && i < len(r); i++ {
			width[i] = max(width[i], utf8.RuneCountInString(r[i]))
		}
	}
	left := func(i int) bool { return i < len(t.Left) && t.Left[i] }
	var b strings.Builder
	line := func(cells []string) {
		var l strings.Builder
		for i := 0; i < ncol; i++ {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			if i > 0 {
				l.WriteString("  ")
			}
			gap := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if left(i) {
				l.WriteString(c)
				l.WriteString(gap)
			} else {
				l.WriteString(gap)
				l.WriteString(c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	line(t.Header)
	total := 0
	for i, wd := range width {
		total += wd
		if i > 0 {
			total += 2
		}
	}
	b.WriteString(strings.Repeat("-", total))
	b.WriteByte('\n')
	for _, r := range t.Rows {
		line(r)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}
