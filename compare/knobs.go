package compare

import "github.com/schedlens/schedlens/replay"

// Knob is how often one policy knob changed a decision in a modeled run
// (replay.Knob: the policies model counts, replay.Result carries, the
// report prints it with Line and Warning).
type Knob = replay.Knob
