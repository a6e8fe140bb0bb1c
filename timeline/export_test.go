package timeline

// ResolveInFinish makes b resolve task instances in Finish, as it does for
// events that arrive out of time order, so that a test can compare the two
// ways.
func ResolveInFinish(b *Builder) { b.online = nil }
