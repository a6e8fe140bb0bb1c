package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/spf13/cobra"
)

// htmlCases are one command line for each command that has --format
// (TestEveryFormatHasHTML checks that none is missing), small enough for
// the whole set to run in about a second. "--format html" is appended.
var htmlCases = []struct {
	name string
	args []string
}{
	{"report-juno", []string{"report", fx + "qemu-juno-asym/trace.txt.zst"}},
	{"report-embedded", []string{"report"}},
	{"latency", []string{"latency", fx + "qemu-juno-asym/trace.txt.zst"}},
	{"idle", []string{"idle", fx + "qemu-smt8-hackbench/trace.txt.zst"}},
	{"misplaced", []string{"misplaced", fx + "qemu-juno-asym/trace.txt.zst"}},
	{"tasks", []string{"tasks", fx + "qemu-juno-asym/trace.txt.zst"}},
	{"cpus", []string{"cpus", fx + "qemu-juno-asym/trace.txt.zst"}},
	{"replay", []string{"replay", fx + "qemu-juno-asym/trace.txt.zst"}},
	{"whatif", []string{"whatif", "--runs", "2", "--change", "NO_RUN_TO_PARITY", fx + "qemu-juno-asym/trace.txt.zst"}},
	{"compare", []string{"compare", fx + "ftrace-hackbench-cyclictest/trace.txt.gz", fx + "perf-hackbench-cyclictest/perf-script.txt.gz"}},
	{"scenario", []string{"scenario", "000-lb-eligible-first"}},
	{"topology-show", []string{"topology", "show", "--topology", "juno-r2"}},
}

var (
	htmlPagesOnce sync.Once
	htmlPages     map[string]string
	htmlPagesErr  string
)

// renderHTMLCases runs every case once per test binary.
func renderHTMLCases(t *testing.T) map[string]string {
	t.Helper()
	htmlPagesOnce.Do(func() {
		htmlPages = map[string]string{}
		for _, c := range htmlCases {
			out, stderr, code := execute(t, append(append([]string{}, c.args...), "--format", "html")...)
			if code != 0 {
				htmlPagesErr += fmt.Sprintf("%s: exit %d: %s\n", c.name, code, stderr)
				continue
			}
			htmlPages[c.name] = out
		}
	})
	if htmlPagesErr != "" {
		t.Fatal(htmlPagesErr)
	}
	return htmlPages
}

// TestEveryFormatHasHTML: every command with a --format flag accepts
// html, says so in its help, and writes a whole page.
func TestEveryFormatHasHTML(t *testing.T) {
	pages := renderHTMLCases(t)
	covered := map[string]bool{}
	for _, c := range htmlCases {
		covered[strings.Join(commandPath(c.args), " ")] = true
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("format"); f != nil {
			path := strings.TrimPrefix(c.CommandPath(), "schedlens ")
			if !covered[path] {
				t.Errorf("%s has --format but no case in htmlCases", path)
			}
			if !strings.Contains(f.Usage, "html") {
				t.Errorf("%s --format: the help does not name html: %q", path, f.Usage)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd())
	for name, p := range pages {
		if !strings.HasPrefix(p, "<!DOCTYPE html>\n") || !strings.HasSuffix(p, "</html>\n") || !strings.Contains(p, "<pre>") {
			t.Errorf("%s: not a whole page: %.80q ... %.40q", name, p, p[max(0, len(p)-40):])
		}
	}
}

// commandPath is the leading words of args that name a command.
func commandPath(args []string) []string {
	if len(args) > 1 && args[0] == "topology" {
		return args[:2]
	}
	return args[:1]
}

// chromiumPath returns a Chromium binary, or skips the test.
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (Debian: apt-get install chromium; .ci/run installs it): the HTML pages are not opened in a browser")
	return ""
}

// pageCheck runs in each page after load. It reports the plots drawn
// with no area, the CDF curves of no length, and whether a click on a
// number column of each sortable table sorts it (largest first) and a
// second click reverses it.
const pageCheck = `(() => {
  const r = {svgs: 0, flat: [], curves: 0, empty: [], tables: 0, unsorted: []};
  document.querySelectorAll('svg').forEach((s, i) => {
    r.svgs++;
    const b = s.getBBox();
    if (!(b.width > 0 && b.height > 0)) r.flat.push(s.getAttribute('aria-label') || String(i));
  });
  document.querySelectorAll('path.cdf').forEach(p => {
    r.curves++;
    if (!(p.getTotalLength() > 0)) r.empty.push(p.dataset.series);
  });
  document.querySelectorAll('table.sortable').forEach((tb, i) => {
    r.tables++;
    const col = [...tb.tHead.rows[0].cells].findIndex(th => !th.classList.contains('l'));
    const values = () => [...tb.tBodies[0].rows].map(row => parseFloat(row.cells[col].textContent)).filter(v => !isNaN(v));
    const th = tb.tHead.rows[0].cells[col];
    th.click();
    const down = values();
    th.click();
    const up = values();
    const sorted = (v, dir) => v.every((x, k) => k === 0 || dir * (x - v[k - 1]) >= 0);
    if (down.length < 2 || !sorted(down, -1) || !sorted(up, 1)) r.unsorted.push(i + ': ' + th.textContent);
  });
  return r;
})()`

type pageResult struct {
	SVGs     int      `json:"svgs"`
	Flat     []string `json:"flat"`
	Curves   int      `json:"curves"`
	Empty    []string `json:"empty"`
	Tables   int      `json:"tables"`
	Unsorted []string `json:"unsorted"`
}

// TestHTMLInChromium opens every command's HTML page in headless Chromium
// and checks that it runs without a script error or console error, draws
// every plot and curve, and sorts its tables. SCHEDLENS_SCREENSHOTS=DIR
// also saves a full-page screenshot of each at 1280 pixels wide.
func TestHTMLInChromium(t *testing.T) {
	bin := chromiumPath(t)
	pages := renderHTMLCases(t)
	dir := t.TempDir()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")), chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	var mu sync.Mutex
	var problems []string
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			problems = append(problems, fmt.Sprintf("script error at line %d column %d: %s", d.LineNumber+1, d.ColumnNumber+1, msg))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		}
	})
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	shots := os.Getenv("SCHEDLENS_SCREENSHOTS")
	for _, c := range htmlCases {
		file := filepath.Join(dir, c.name+".html")
		if err := os.WriteFile(file, []byte(pages[c.name]), 0o644); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		problems = nil
		mu.Unlock()
		// The check runs after load; a script error while loading is
		// reported by the listener before it.
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file)); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r, err := chromedp.Run(ctx, chromedp.Evaluate[pageResult](pageCheck))
		if err != nil {
			t.Fatalf("%s: the check script: %v", c.name, err)
		}
		if shots != "" {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Errorf("%s: screenshot: %v", c.name, err)
			} else if err := os.WriteFile(filepath.Join(shots, c.name+".png"), png, 0o644); err != nil {
				t.Error(err)
			}
		}
		mu.Lock()
		for _, p := range problems {
			t.Errorf("%s: %s", c.name, p)
		}
		mu.Unlock()
		if len(r.Flat) > 0 || len(r.Empty) > 0 || len(r.Unsorted) > 0 {
			t.Errorf("%s: plots without area %v, empty curves %v, tables that did not sort %v", c.name, r.Flat, r.Empty, r.Unsorted)
		}
		// What each page must show: the report its three plots and a
		// table, the commands with CDFs at least one plot with curves.
		want := map[string][3]int{ // svgs, curves (at least), tables
			"report-juno": {3, 2, 1}, "report-embedded": {3, 2, 1}, "latency": {2, 2, 1}, "idle": {1, 0, 1}, "misplaced": {1, 0, 1},
			"tasks": {0, 0, 1}, "cpus": {0, 0, 1}, "replay": {1, 2, 0}, "whatif": {1, 2, 0}, "compare": {1, 2, 0}, "scenario": {1, 1, 0},
		}[c.name]
		if r.SVGs < want[0] || r.Curves < want[1] || r.Tables < want[2] {
			t.Errorf("%s: %d plots, %d curves, %d tables; want at least %v", c.name, r.SVGs, r.Curves, r.Tables, want)
		}
	}
}
