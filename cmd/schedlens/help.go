package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// helpWidth is the width of help text: like the text reports, it must read
// in an 80-column terminal and quoted in a mail.
const helpWidth = 80

// usageTemplate is cobra's usage template with every line kept within
// helpWidth: the usage line and the command list wrapped with a hanging
// indent, the flags by pflag's FlagUsagesWrapped. Long texts and examples
// are written within the width (TestHelpWidth).
const usageTemplate = `Usage:{{if .Runnable}}
{{wrapIndent .UseLine 2 4}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
{{commandLine .}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsagesWrapped 80 | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsagesWrapped 80 | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Run "{{.CommandPath}} [command] --help" for more about a command.{{end}}
`

func init() {
	cobra.AddTemplateFunc("wrapIndent", wrapIndent)
	cobra.AddTemplateFunc("commandLine", func(c *cobra.Command) string {
		pad := c.NamePadding()
		if p := c.Parent(); p != nil {
			// The padding of the longest sibling's name, as cobra's rpad.
			pad = 0
			for _, s := range p.Commands() {
				if s.IsAvailableCommand() || s.Name() == "help" {
					pad = max(pad, len(s.Name()))
				}
			}
		}
		head := "  " + c.Name() + strings.Repeat(" ", pad-len(c.Name())+1)
		return head + strings.TrimLeft(wrapIndent(c.Short, len(head), len(head)), " ")
	})
}

// wrapHelp keeps cobra's own help texts (the completion commands') within
// helpWidth: a longer line is wrapped at word boundaries under its own
// indentation.
func wrapHelp(c *cobra.Command) {
	var out []string
	for _, l := range strings.Split(c.Long, "\n") {
		if len(l) > helpWidth {
			ind := len(l) - len(strings.TrimLeft(l, " \t"))
			l = wrapIndent(l, ind, ind)
		}
		out = append(out, l)
	}
	c.Long = strings.Join(out, "\n")
	for _, s := range c.Commands() {
		wrapHelp(s)
	}
}

// wrapIndent wraps s at word boundaries within helpWidth, the first line
// indented by first spaces, the others by rest.
func wrapIndent(s string, first, rest int) string {
	var lines []string
	line := strings.Repeat(" ", first)
	empty := true
	for _, w := range strings.Fields(s) {
		if !empty && len(line)+1+len(w) > helpWidth {
			lines = append(lines, line)
			line, empty = strings.Repeat(" ", rest), true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	return strings.Join(append(lines, line), "\n")
}
