package report

import (
	"fmt"
	"html"
	"strings"
)

// HTMLTable is a table of an HTML page: a title, the table (its Left
// columns hold names, the others numbers) and notes under it (plain
// text, one paragraph each).
type HTMLTable struct {
	Title string
	Table *Table
	Notes []string
}

// html renders the table as <table class="sortable">: a click on a header
// sorts the rows by that column (numbers largest first, names in order;
// a second click reverses), by sortScript.
func (t *HTMLTable) html(b *strings.Builder) {
	fmt.Fprintf(b, "<section>\n<h2>%s</h2>\n<div class=\"scroll\"><table class=\"sortable\">\n<thead><tr>", html.EscapeString(t.Title))
	left := func(i int) bool { return i < len(t.Table.Left) && t.Table.Left[i] }
	for i, h := range t.Table.Header {
		cls := ""
		if left(i) {
			cls = " class=\"l\""
		}
		fmt.Fprintf(b, "<th%s title=\"sort by %s\">%s</th>", cls, html.EscapeString(h), html.EscapeString(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.Table.Rows {
		b.WriteString("<tr>")
		for i, c := range r {
			if left(i) {
				fmt.Fprintf(b, "<td class=\"l\">%s</td>", html.EscapeString(c))
			} else {
				fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(c))
			}
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table></div>\n")
	for _, n := range t.Notes {
		fmt.Fprintf(b, "<p class=\"note\">%s</p>\n", html.EscapeString(n))
	}
	b.WriteString("</section>\n")
}

// sortScript sorts a table.sortable by the clicked header's column. A
// number column sorts by the cell's number (a trailing "*" or unit
// ignored; a cell without one, such as "-", counts as the smallest), a
// name column as text.
const sortScript = `<script>
document.addEventListener('click', function (e) {
  var th = e.target.closest('table.sortable th');
  if (!th) return;
  var table = th.closest('table'), col = th.cellIndex, text = th.classList.contains('l');
  var first = text ? 'asc' : 'desc';
  var dir = th.dataset.dir === first ? (text ? 'desc' : 'asc') : first;
  Array.prototype.forEach.call(th.parentNode.cells, function (h) { delete h.dataset.dir; });
  th.dataset.dir = dir;
  var key = function (row) {
    var s = row.cells[col].textContent;
    if (text) return s;
    var v = parseFloat(s);
    return isNaN(v) ? -Infinity : v;
  };
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  rows.sort(function (a, b) {
    var x = key(a), y = key(b), c = x < y ? -1 : x > y ? 1 : 0;
    return dir === 'asc' ? c : -c;
  });
  rows.forEach(function (r) { body.appendChild(r); });
});
</script>
`
