package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// contextCases checks that every method honours a cancelled context.
func contextCases() []suiteCase {
	return []suiteCase{
		{"Cancelled", testCancelled},
	}
}

// testCancelled calls every method with a context cancelled beforehand and
// checks that each fails with an error wrapping context.Canceled and that
// no write took effect.
func testCancelled(t *testing.T, f *fixture) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tu, r := f.newTurn("org", "turn"), f.newResult("res")
	m := f.transcript("conv")[0]
	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"PutTurn", func(ctx context.Context) error { return f.PutTurn(ctx, tu) }},
		{"GetTurn", func(ctx context.Context) error { _, err := f.GetTurn(ctx, tu.OrgID, tu.ID); return err }},
		{"AppendMessage", func(ctx context.Context) error { _, err := f.AppendMessage(ctx, tu.OrgID, m); return err }},
		{"ListMessages", func(ctx context.Context) error {
			_, err := f.ListMessages(ctx, tu.OrgID, m.ConversationID, 0)
			return err
		}},
		{"PutResult", func(ctx context.Context) error { return f.PutResult(ctx, r) }},
		{"GetResult", func(ctx context.Context) error {
			_, err := f.GetResult(ctx, r.OrgID, r.ConversationID, r.Ref)
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(cancelled); !errors.Is(err, context.Canceled) {
				t.Errorf("%s with a cancelled context: err = %v, want context.Canceled", c.name, err)
			}
		})
	}
	t.Run("NothingWritten", func(t *testing.T) { f.wantNothingWritten(t, tu, m, r) })
}

// wantNothingWritten checks that the cancelled writes stored nothing.
func (f *fixture) wantNothingWritten(t *testing.T, tu store.Turn, m store.Message, r store.Result) {
	_, err := f.GetTurn(t.Context(), tu.OrgID, tu.ID)
	wantNotFound(t, "GetTurn after cancelled PutTurn", err)
	if got := f.list(t, tu.OrgID, m.ConversationID, 0); len(got) != 0 {
		t.Errorf("cancelled AppendMessage stored %+v", got)
	}
	_, err = f.GetResult(t.Context(), r.OrgID, r.ConversationID, r.Ref)
	wantNotFound(t, "GetResult after cancelled PutResult", err)
}
