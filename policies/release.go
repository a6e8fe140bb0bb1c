package policies

import (
	"fmt"
	"strconv"
	"strings"
)

// Release is what a trace says about the kernel it was recorded on: the
// release as uname -r prints it ("6.12.95+deb12-arm64") and where it was
// read ("the perf.data header", "meta.txt next to the trace"). Release ""
// means the trace does not say.
type Release struct {
	Release string
	Source  string
}

// DefaultKernel is the version modeled when neither the command line nor
// the trace names one: the newest modeled.
func DefaultKernel() string { return Kernels[len(Kernels)-1].Version }

// parseMajorMinor reads the leading "MAJOR.MINOR" of a release.
func parseMajorMinor(s string) (major, minor int, ok bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	end := 0
	for end < len(s) && (s[end] == '.' || (s[end] >= '0' && s[end] <= '9')) {
		end++
	}
	parts := strings.Split(s[:end], ".")
	if len(parts) < 2 {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return a, b, true
}

// VersionForRelease returns the modeled version nearest at or below a
// kernel release: a 6.12.95 kernel is modeled as 6.12, a 6.15 one as 6.12
// (it has what 6.12 has, and the model knows nothing of what came after),
// a 6.19 one as 6.18. A release older than every modeled version, or one
// that does not start with MAJOR.MINOR, is an error.
func VersionForRelease(release string) (string, error) {
	ma, mi, ok := parseMajorMinor(release)
	if !ok {
		return "", fmt.Errorf("kernel release %q does not start with MAJOR.MINOR", release)
	}
	best := ""
	for _, k := range Kernels {
		ka, ki, _ := parseMajorMinor(k.Version)
		if ka < ma || (ka == ma && ki <= mi) {
			best = k.Version
		}
	}
	if best == "" {
		return "", fmt.Errorf("kernel release %s is older than every modeled version (%s; EEVDF came in 6.6)", release, strings.Join(versions(), ", "))
	}
	return best, nil
}

// ChooseKernel decides which modeled version a replay of a trace runs and
// says why, for the report's notes. explicit is the version the user
// named (--kernel, or the head of --policy), "" when none; rel is what the
// trace says about its kernel. An explicit version wins; a trace's release
// picks VersionForRelease of it; otherwise DefaultKernel is assumed.
func ChooseKernel(explicit string, rel Release) (version string, notes []string) {
	from := ""
	var relErr error
	if rel.Release != "" {
		from, relErr = VersionForRelease(rel.Release)
	}
	seen := fmt.Sprintf("the trace's kernel is %s (%s)", rel.Release, rel.Source)
	switch {
	case explicit != "":
		if relErr != nil {
			notes = append(notes, fmt.Sprintf("kernel %s as given; %s: %v", explicit, seen, relErr))
		} else if from != "" && from != explicit {
			notes = append(notes, fmt.Sprintf("kernel %s as given, but %s, modeled as %s: the replay models another kernel than the recording's", explicit, seen, from))
		}
		return explicit, notes
	case relErr != nil:
		v := DefaultKernel()
		return v, append(notes, fmt.Sprintf("assumed kernel %s: %s: %v; pass --kernel", v, seen, relErr))
	case from != "":
		return from, append(notes, fmt.Sprintf("kernel %s: %s; %s is the newest modeled version (%s) at or below it; pass --kernel to model another",
			from, seen, from, strings.Join(versions(), ", ")))
	}
	v := DefaultKernel()
	return v, append(notes, fmt.Sprintf("assumed kernel %s: the trace does not carry the kernel release; pass --kernel", v))
}

// Version returns the kernel version at the head of a policy description
// ("6.12" of "6.12,+resched-ineligible"), "" when it does not start with
// one.
func Version(desc string) string {
	head := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(desc), "mainline-"), "v")
	n := 0
	for n < len(head) && (head[n] == '.' || (head[n] >= '0' && head[n] <= '9')) {
		n++
	}
	return head[:n]
}
