package report

import "strings"

// mdReplacer escapes what markdown (GitHub-flavoured, with raw HTML
// allowed) would read as syntax in text that comes from a trace (comms,
// paths, notes quoting them): the backslash first, then code spans,
// emphasis, table cells, links and HTML. A line break becomes a space, so
// a cell or list item stays on its line.
var mdReplacer = strings.NewReplacer(
	`\`, `\\`,
	"`", "\\`",
	"*", `\*`,
	"_", `\_`,
	"|", `\|`,
	"[", `\[`,
	"]", `\]`,
	"&", "&amp;",
	"<", "&lt;",
	">", "&gt;",
	"\r\n", " ",
	"\n", " ",
	"\r", " ",
)

// MarkdownEscape makes s literal text in markdown: rendered, it reads as s.
func MarkdownEscape(s string) string { return mdReplacer.Replace(s) }

// CSVCell neutralizes a text cell a spreadsheet would run as a formula
// (one starting with =, +, -, @, a tab or a carriage return) by putting
// an apostrophe before it, as OWASP's CSV-injection advice does. Only text
// that comes from the trace (comms) goes through it; numbers stay numbers.
func CSVCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
