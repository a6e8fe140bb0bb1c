package policies

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/schedlens/schedlens/replay"
)

// The seed patches' test cases, as workload specs (replay.ParseSpec).
//
//go:embed scenarios/*.spec
var scenarioFS embed.FS

// ScenarioNames lists the embedded scenario files in seed order.
func ScenarioNames() []string {
	ents, err := fs.ReadDir(scenarioFS, "scenarios")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// ScenarioSource returns the text of scenario name ("003-newidle-bailout.spec",
// also accepted without ".spec", as the seed number "003", or as the patch
// knob name "newidle-bailout").
func ScenarioSource(name string) (string, error) {
	file := scenarioFile(name)
	b, err := scenarioFS.ReadFile("scenarios/" + file)
	if err != nil {
		return "", fmt.Errorf("no scenario %q: have %s", name, strings.Join(ScenarioNames(), ", "))
	}
	return string(b), nil
}

func scenarioFile(name string) string {
	for _, p := range Patches {
		if name == p.Seed || name == p.Name {
			return p.Scenario
		}
	}
	if !strings.HasSuffix(name, ".spec") {
		name += ".spec"
	}
	return name
}

// Scenario parses the embedded scenario name.
func Scenario(name string) (*replay.Spec, error) {
	src, err := ScenarioSource(name)
	if err != nil {
		return nil, err
	}
	return replay.ParseSpec(strings.NewReader(src), "scenarios/"+scenarioFile(name))
}
