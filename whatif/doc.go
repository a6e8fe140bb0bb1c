// Package whatif replays a recording under a modeled kernel and measures
// the modeled run beside the recorded one: the pipeline `schedlens replay`
// runs, and the one a what-if runs twice (a baseline and a changed model).
//
// Replay takes a timeline and what the recording machine imposed (affinity,
// CPU speed, topology) and:
//
//  1. extracts the workload (replay.ExtractWith), with its assumptions;
//  2. prices newidle balancing from the recording (policies.CalibratedCost)
//     and builds the model;
//  3. calibrates the replay's delays and tick from the recording
//     (replay.CalibratedOptions), lets the run go on past the recording's
//     end while tasks that exit in it have not (replay.Options.Overrun);
//  4. measures both runs with compare.Measure over the recorded window
//     (completion over the whole modeled run) under the same masks.
//
// The package holds no model and no metric of its own: it wires replay,
// policies and compare together, so that the command line and the tests
// run the same thing.
package whatif
