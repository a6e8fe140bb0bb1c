package timeline

// ResolveInFinish makes b resolve task instances and summarize its events
// in Finish, as it does for events that arrive out of time order, so that
// a test can compare the two ways.
func ResolveInFinish(b *Builder) { b.online, b.osum = nil, nil }

// SetStreamChunk sets how many events a StreamWalk walks at a time, and
// returns a function that puts the size back.
func SetStreamChunk(n int) func() {
	old := streamChunk
	streamChunk = n
	return func() { streamChunk = old }
}

// SetRawLogBytes sets how much of an EventLog is kept uncompressed, and
// returns what puts it back.
func SetRawLogBytes(n int) func() {
	old := rawLogBytes
	rawLogBytes = n
	return func() { rawLogBytes = old }
}

// SetAlongEvery sets how many events a Builder adds between two hand-overs
// to a walk along it, and returns what puts it back.
func SetAlongEvery(n int) func() {
	old := alongEvery
	alongEvery = n
	return func() { alongEvery = old }
}
