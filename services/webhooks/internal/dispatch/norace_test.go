//go:build !race

package dispatch_test

// raceEnabled scales the heavy tests down under the race detector.
const raceEnabled = false
