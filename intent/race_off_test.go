//go:build !race

package intent_test

// raceDetector reports whether the tests run under -race.
const raceDetector = false
