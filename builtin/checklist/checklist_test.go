package checklist_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/builtin/checklist"
	"github.com/quiverhq/quiver/tool"
)

// steps is n pending steps as update_tasks' arguments' items.
func steps(n int) []map[string]string {
	var out []map[string]string
	for i := range n {
		out = append(out, map[string]string{"text": "step " + string(rune('a'+i%26)), "status": "pending"})
	}
	return out
}

func args(t *testing.T, tasks any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]any{"tasks": tasks})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUpdateTasks(t *testing.T) {
	long := strings.Repeat("é", checklist.MaxItemChars)
	tests := []struct {
		name     string
		tasks    any
		want     []tool.ChecklistItem
		wantText string
		wantErr  string
	}{
		{
			name: "a checklist, whitespace normalised",
			tasks: []map[string]string{
				{"text": "Find the\n figures", "status": "completed"},
				{"text": "Draw the chart", "status": "in_progress"},
				{"text": "Write it up", "status": "pending"},
			},
			want: []tool.ChecklistItem{
				{Text: "Find the figures", Status: tool.ChecklistDone},
				{Text: "Draw the chart", Status: tool.ChecklistInProgress},
				{Text: "Write it up", Status: tool.ChecklistPending},
			},
			wantText: "Checklist shown to the user (1 of 3 done):\n[x] Find the figures\n[>] Draw the chart\n[ ] Write it up",
		},
		{name: "control characters dropped", tasks: []map[string]string{{"text": "Draw\x1b[2J the\x00 chart", "status": "pending"}},
			want: []tool.ChecklistItem{{Text: "Draw [2J the chart", Status: tool.ChecklistPending}}},
		{name: "an empty list clears it", tasks: []map[string]string{}, want: []tool.ChecklistItem{}, wantText: "Checklist cleared."},
		{name: "twenty steps allowed", tasks: steps(checklist.MaxItems), want: nil},
		{name: "twenty-one refused", tasks: steps(checklist.MaxItems + 1), wantErr: `field "tasks": maxItems`},
		{name: "two in progress refused", tasks: []map[string]string{{"text": "a", "status": "in_progress"}, {"text": "b", "status": "pending"}, {"text": "c", "status": "in_progress"}},
			wantErr: "steps 1 and 3 are both in_progress"},
		{name: "unknown status refused", tasks: []map[string]string{{"text": "a", "status": "blocked"}}, wantErr: `status`},
		{name: "empty step refused", tasks: []map[string]string{{"text": "a", "status": "pending"}, {"text": "  ", "status": "pending"}}, wantErr: "step 2 is empty"},
		{name: "longest step allowed", tasks: []map[string]string{{"text": long, "status": "pending"}}, want: []tool.ChecklistItem{{Text: long, Status: tool.ChecklistPending}}},
		{name: "longer step refused", tasks: []map[string]string{{"text": long + "x", "status": "pending"}}, wantErr: "longer than 200 characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := checklist.Tool().Run(context.Background(), tool.Scope{}, args(t, tc.tasks))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Effect.Checklist == nil {
				t.Fatal("no checklist in the effect")
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, res.Effect.Checklist.Items); diff != "" {
					t.Errorf("items (-want +got):\n%s", diff)
				}
			} else if len(res.Effect.Checklist.Items) != checklist.MaxItems {
				t.Errorf("%d items, want %d", len(res.Effect.Checklist.Items), checklist.MaxItems)
			}
			if tc.wantText != "" && res.Content != tc.wantText {
				t.Errorf("content = %q, want %q", res.Content, tc.wantText)
			}
		})
	}
}
