package policies

import (
	"strings"
	"testing"
)

func TestVersionForRelease(t *testing.T) {
	for _, tc := range []struct{ rel, want, err string }{
		{"6.12.95+deb12-arm64", "6.12", ""},
		{"6.18.44-fc-v1045", "6.18", ""},
		{"6.6.0", "6.6", ""},
		{"6.11.2", "6.6", ""},
		{"6.15-rc1", "6.12", ""},
		{"6.19", "6.18", ""},
		{"7.1.0", "6.18", ""},
		{"v6.12", "6.12", ""},
		{"5.15.0-91-generic", "", "older than every modeled version"},
		{"linux", "", "does not start with MAJOR.MINOR"},
	} {
		got, err := VersionForRelease(tc.rel)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("VersionForRelease(%q) = %q, %v; want %q, %q", tc.rel, got, err, tc.want, tc.err)
		}
	}
}

func TestChooseKernel(t *testing.T) {
	rel := Release{Release: "6.12.95+deb12-arm64", Source: "meta.txt next to the trace"}
	for _, tc := range []struct {
		explicit string
		rel      Release
		want     string
		note     string // "" for no note
	}{
		{"", rel, "6.12", "kernel 6.12: the trace's kernel is 6.12.95+deb12-arm64 (meta.txt next to the trace); 6.12 is the newest modeled version (6.6, 6.12, 6.18) at or below it"},
		{"", Release{}, "6.18", "assumed kernel 6.18: the trace does not carry the kernel release; pass --kernel"},
		{"6.12", rel, "6.12", ""},
		{"6.18", rel, "6.18", "kernel 6.18 as given, but the trace's kernel is 6.12.95+deb12-arm64 (meta.txt next to the trace), modeled as 6.12"},
		{"", Release{Release: "5.10.0", Source: "the perf.data header"}, "6.18", "assumed kernel 6.18: the trace's kernel is 5.10.0 (the perf.data header): kernel release 5.10.0 is older"},
	} {
		got, notes := ChooseKernel(tc.explicit, tc.rel)
		if got != tc.want || (tc.note == "") != (len(notes) == 0) || (tc.note != "" && !strings.HasPrefix(notes[0], tc.note)) {
			t.Errorf("ChooseKernel(%q, %+v) = %q, %q; want %q, %q", tc.explicit, tc.rel, got, notes, tc.want, tc.note)
		}
	}
	if Version("6.12,+resched-ineligible") != "6.12" || Version("mainline-6.18") != "6.18" || Version("+x") != "" {
		t.Errorf("Version")
	}
}
