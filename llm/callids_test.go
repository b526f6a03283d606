package llm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/llm"
)

// TestCallIDsUnique: each ID handed out is distinct from the others of
// the reply, an ID free so far is kept as it is, and a suffix already
// taken is skipped.
func TestCallIDsUnique(t *testing.T) {
	var ids llm.CallIDs
	var got []string
	for _, id := range []string{"call_0", "a", "call_0", "call_0_3", "call_0", "a"} {
		got = append(got, ids.Unique(id))
	}
	want := []string{"call_0", "a", "call_0_2", "call_0_3", "call_0_4", "a_2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("IDs (-want +got):\n%s", d)
	}
}
