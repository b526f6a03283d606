//go:build !race

package fetch

// raceDetector reports whether the tests run under -race.
const raceDetector = false
