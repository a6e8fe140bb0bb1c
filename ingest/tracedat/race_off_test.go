//go:build !race

package tracedat_test

const raceEnabled = false
