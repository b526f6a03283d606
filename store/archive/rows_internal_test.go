package archive

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

func archiveTable(t *testing.T, name string) store.ArchiveTable {
	t.Helper()
	for _, tb := range store.ArchiveTables() {
		if tb.Name == name {
			return tb
		}
	}
	t.Fatalf("no archive table %s", name)
	return store.ArchiveTable{}
}

// TestOlderResultsRowsAreFilled: a results row of an archive written
// before the stored results quota (without user_id, size and evicted_at)
// imports with its body's size, no user and nothing evicted; a row
// lacking a column that has no fill is still refused.
func TestOlderResultsRowsAreFilled(t *testing.T) {
	tb := archiveTable(t, "results")
	body := base64.StdEncoding.EncodeToString([]byte("12345"))
	line := `{"ref":"r1","org_id":"o","conversation_id":"c","turn_id":"t","tool":"calculate","body":"` + body + `","created_at":"2026-01-02T03:04:05.000000000Z"}`
	row, err := decodeRow(tb, []byte(line))
	if err != nil {
		t.Fatalf("decodeRow of an older row: %v", err)
	}
	want := []any{"r1", "o", "c", "t", "calculate", []byte("12345"), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "", int64(5), nil}
	if d := cmp.Diff(want, row); d != "" {
		t.Errorf("filled row (-want +got):\n%s", d)
	}
	noTool := `{"ref":"r1","org_id":"o","conversation_id":"c","turn_id":"t","body":"` + body + `","created_at":"2026-01-02T03:04:05.000000000Z"}`
	if _, err := decodeRow(tb, []byte(noTool)); err == nil {
		t.Error("a row without its tool column was accepted")
	}
}

// TestOlderMessageRowsAreFilled: a messages row of an archive written
// before the refusal mark (without refused) imports marked refused when
// it is a tool result beginning "Not run: ", as the migrations mark such
// rows, and unmarked otherwise.
func TestOlderMessageRowsAreFilled(t *testing.T) {
	tb := archiveTable(t, "messages")
	for _, tc := range []struct {
		role, content string
		want          bool
	}{
		{"tool", "Not run: this turn has used its limit of 64 tool calls; answer with what you have.", true},
		{"tool", "found it", false},
		{"user", "Not run: a user may write this", false},
	} {
		content := base64.StdEncoding.EncodeToString([]byte(tc.content))
		line := `{"org_id":"o","conversation_id":"c","seq":1,"turn_id":"t","role":"` + tc.role + `","content":"` + content +
			`","tool_name":"","tool_call_id":"","ref":"","is_error":false,"created_at":"2026-01-02T03:04:05.000000000Z"}`
		row, err := decodeRow(tb, []byte(line))
		if err != nil {
			t.Fatalf("decodeRow of an older row: %v", err)
		}
		if got := row[len(row)-1]; got != tc.want {
			t.Errorf("%s %q: refused filled as %v, want %t", tc.role, tc.content, got, tc.want)
		}
	}
}
