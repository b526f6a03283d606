//go:build race

package discovery_test

// raceDetector reports whether the tests run under -race.
const raceDetector = true
