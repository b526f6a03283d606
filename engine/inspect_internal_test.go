package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
)

func TestPastExclusions(t *testing.T) {
	recorded := []store.Exclusion{{Name: "web_search", Reason: "web search is disabled in config"}}
	tests := []struct {
		name     string
		turn     store.Turn
		restored []registry.Exclusion
		want     []registry.Exclusion
	}{
		{
			name:     "RecordedOnly",
			turn:     store.Turn{Tools: []string{"calculate"}, Excluded: recorded},
			restored: []registry.Exclusion{{Name: "web_search", Reason: "not in the toolset this turn started with"}},
			want:     []registry.Exclusion{{Name: "web_search", Reason: "web search is disabled in config"}},
		},
		{
			name:     "NothingLeftOut",
			turn:     store.Turn{Tools: []string{"calculate"}, Excluded: []store.Exclusion{}},
			restored: []registry.Exclusion{{Name: "fetch_url", Reason: "not in the toolset this turn started with"}},
			want:     []registry.Exclusion{},
		},
		{
			name: "DeclaredToolLostSince",
			turn: store.Turn{Tools: []string{"calculate", "notes/search"}, Excluded: recorded},
			restored: []registry.Exclusion{
				{Name: "notes/search", Reason: "no longer registered"},
				{Name: "web_search", Reason: "not in the toolset this turn started with"},
			},
			want: []registry.Exclusion{
				{Name: "web_search", Reason: "web search is disabled in config"},
				{Name: "notes/search", Reason: "in the toolset this turn started with; today: no longer registered"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, pastExclusions(tc.turn, tc.restored)); d != "" {
				t.Errorf("pastExclusions (-want +got):\n%s", d)
			}
		})
	}
}
