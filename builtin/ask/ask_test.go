package ask_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/builtin/ask"
	"github.com/quiverhq/quiver/tool"
)

func TestAsk(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		wantPause *tool.Pause
		wantErr   string
	}{
		{name: "question only", args: `{"question":"Which quarter?"}`, wantPause: &tool.Pause{Question: "Which quarter?"}},
		{name: "one suggested answer", args: `{"question":"Which quarter?","suggested_answers":["Q3"]}`, wantPause: &tool.Pause{Question: "Which quarter?", Suggested: "Q3"}},
		{name: "two suggested answers refused", args: `{"question":"Which quarter?","suggested_answers":["Q3","Q4"]}`, wantErr: `field "suggested_answers": maxItems`},
		{name: "empty question", args: `{"question":"  "}`, wantErr: "question is empty"},
		{name: "NUL and controls as spaces", args: `{"question":"Which\u0000quarter?\u0007","suggested_answers":["Q\u00003"]}`, wantPause: &tool.Pause{Question: "Which quarter?", Suggested: "Q 3"}},
		{name: "long question", args: `{"question":"` + strings.Repeat("a", ask.MaxQuestionChars+1) + `"}`, wantErr: "longer than 500"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ask.Tool().Run(context.Background(), tool.Scope{}, json.RawMessage(tc.args))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPause, res.Effect.Pause); diff != "" {
				t.Errorf("pause (-want +got):\n%s", diff)
			}
			if !strings.Contains(res.Content, "pauses") {
				t.Errorf("content %q does not tell the model the turn pauses", res.Content)
			}
		})
	}
}
