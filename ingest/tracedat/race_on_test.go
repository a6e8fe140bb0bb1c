//go:build race

package tracedat_test

// raceEnabled: the race detector makes sync.Pool drop what is put back at
// random, so allocation totals are not the program's own.
const raceEnabled = true
