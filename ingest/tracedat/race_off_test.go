//go:build !race

package tracedat

const raceEnabled = false
