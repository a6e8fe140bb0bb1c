package compare

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestABHTMLPlots: the HTML report has one CDF plot per scope with
// samples (overall, each class, the top comms), each with both sides'
// curves, and keeps the text report.
func TestABHTMLPlots(t *testing.T) {
	r := hackbenchAB(t)
	var buf bytes.Buffer
	if err := WriteAB(&buf, r, "html"); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	figs := strings.Count(page, "<figure>")
	// overall + 3 classes + the top 5 comms (all have samples on a side).
	if figs != 1+3+5 {
		t.Errorf("%d figures, want 9", figs)
	}
	if n := strings.Count(page, `<path class="cdf" data-series="base"`); n != figs {
		t.Errorf("%d base curves for %d figures", n, figs)
	}
	if !strings.Contains(page, "Wakeup latency of comm cyclictest") || !strings.Contains(page, "By comm (top 5") {
		t.Errorf("page lacks the cyclictest plot or the text report")
	}
	for _, label := range []string{">1us<", ">100us<", ">10ms<"} {
		if !strings.Contains(page, label) {
			t.Errorf("no log-axis label %s", label)
		}
	}
}

// renderCheck runs in the page after load: every figure must hold two
// curves of non-zero length and width; the result goes into the body's
// data-cdf-check attribute, which --dump-dom shows.
const renderCheck = `<script>
window.addEventListener('load', () => {
  const figs = [...document.querySelectorAll('figure svg')];
  const bad = [];
  figs.forEach((svg, i) => {
    const drawn = [...svg.querySelectorAll('path.cdf')].filter(p => p.getTotalLength() > 0 && p.getBBox().width > 0);
    if (drawn.length !== 2) bad.push(i);
  });
  document.body.setAttribute('data-cdf-check', (figs.length - bad.length) + '/' + figs.length + (bad.length ? ' bad:' + bad.join(',') : ''));
});
</script>
`

// chromium returns the path of a Chromium binary, or skips.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (Debian: apt-get install chromium); the HTML is not checked in a browser")
	return ""
}

// TestABHTMLInChromium: the page opened in headless Chromium draws both
// CDFs of every plot and logs no script error. SCHEDLENS_SCREENSHOT=FILE
// also saves a screenshot.
func TestABHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	var buf bytes.Buffer
	if err := WriteAB(&buf, hackbenchAB(t), "html"); err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(buf.String(), "</body>", renderCheck+"</body>", 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "compare.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"}
	run := func(extra ...string) (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append(args, extra...), "file://"+path)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium: %v\n%s", err, errb.String())
		}
		return out.String(), errb.String()
	}
	dom, logs := run("--dump-dom")
	m := regexp.MustCompile(`data-cdf-check="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the check script did not run; chromium said:\n%s", logs)
	}
	if m[1] != "9/9" {
		t.Errorf("curves drawn: %s, want 9/9", m[1])
	}
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
			t.Errorf("script error: %s", l)
		}
	}
	if shot := os.Getenv("SCHEDLENS_SCREENSHOT"); shot != "" {
		abs, _ := filepath.Abs(shot)
		run("--screenshot="+abs, "--window-size=900,1400")
		t.Logf("screenshot in %s", abs)
	}
}
