package replicatest_test

import (
	"testing"

	"github.com/quiverhq/quiver/internal/replicatest"
)

// TestMain lets the test binary be the crash tests' writer child.
func TestMain(m *testing.M) { replicatest.Main(m) }
