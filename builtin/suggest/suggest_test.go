package suggest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/builtin/suggest"
	"github.com/quiverhq/quiver/tool"
)

func TestSuggest(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    []string
		wantErr string
	}{
		{name: "normalises whitespace", args: `{"actions":["Compare  with\nlast year","Export as CSV"]}`, want: []string{"Compare with last year", "Export as CSV"}},
		{name: "four allowed", args: `{"actions":["a","b","c","d"]}`, want: []string{"a", "b", "c", "d"}},
		{name: "five refused", args: `{"actions":["a","b","c","d","e"]}`, wantErr: `field "actions": maxItems`},
		{name: "none refused", args: `{"actions":[]}`, wantErr: `field "actions": minItems`},
		{name: "empty action", args: `{"actions":["a"," "]}`, wantErr: "action 2 is empty"},
		{name: "long action", args: `{"actions":["` + strings.Repeat("x", suggest.MaxActionChars+1) + `"]}`, wantErr: "longer than 80"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := suggest.Tool().Run(context.Background(), tool.Scope{}, json.RawMessage(tc.args))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Effect.NextActions); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
		})
	}
}
