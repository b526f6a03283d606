package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// contextCases checks that every method honours a cancelled context.
func contextCases() []suiteCase {
	return []suiteCase{
		{"Cancelled", testCancelled},
	}
}

// written is one record of each kind that a cancelled write must not store.
type written struct {
	conv     store.Conversation
	turn     store.Turn
	msg      store.Message
	res      store.Result
	use      store.Usage
	mcp      store.MCPServer
	intents  intentWrites
	accounts accountWrites
	// settings are stored beforehand, in the accounts' organisation.
	settings store.OrgSettings
}

// testCancelled calls every method with a context cancelled beforehand and
// checks that each fails with an error wrapping context.Canceled and that
// no write took effect.
func testCancelled(t *testing.T, f *fixture) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	w := written{
		conv:     f.newConversation("org", "conv", "user"),
		turn:     f.newTurn("org", "turn"),
		msg:      f.transcript("conv")[0],
		res:      f.newResult("res"),
		use:      f.newUsage("org", 1, 1, at(10)),
		mcp:      f.newMCPServer("org", "mcp"),
		intents:  f.newIntentWrites("org"),
		accounts: f.newAccountWrites(t, "org"),
	}
	w.settings = f.saveOrgSettings(t, newSettings(w.accounts.heldOrg.ID, 0, "held"))
	for _, c := range cancelledCalls(f, w) {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(cancelled); !errors.Is(err, context.Canceled) {
				t.Errorf("%s with a cancelled context: err = %v, want context.Canceled", c.name, err)
			}
		})
	}
	t.Run("NothingWritten", func(t *testing.T) { f.wantNothingWritten(t, w) })
}

// call is one method invoked on w's records.
type call struct {
	name string
	call func(context.Context) error
}

// cancelledCalls returns a call of every store method.
func cancelledCalls(f *fixture, w written) []call {
	return slices.Concat(recordCalls(f, w), mcpCalls(f, w.mcp), intentCalls(f, w.intents),
		accountCalls(f, w.accounts), agentCalls(f, w.accounts), settingsCalls(f, w.settings))
}

// recordCalls returns a call of every method of the transcript and
// accounting repositories.
func recordCalls(f *fixture, w written) []call {
	org := w.turn.OrgID
	return []call{
		{"PutConversation", func(ctx context.Context) error { return f.PutConversation(ctx, w.conv) }},
		{"GetConversation", func(ctx context.Context) error {
			_, err := f.GetConversation(ctx, org, w.conv.ID)
			return err
		}},
		{"ListConversations", func(ctx context.Context) error {
			_, err := f.ListConversations(ctx, org, w.conv.UserID, 0)
			return err
		}},
		{"FindConversations", func(ctx context.Context) error {
			_, err := f.FindConversations(ctx, store.ConversationQuery{OrgID: org, UserID: w.conv.UserID, Text: "x"})
			return err
		}},
		{"UpdateConversation", func(ctx context.Context) error {
			title := "renamed"
			_, err := f.UpdateConversation(ctx, org, w.conv.UserID, w.conv.ID, store.ConversationUpdate{Title: &title})
			return err
		}},
		{"DeleteConversation", func(ctx context.Context) error {
			return f.DeleteConversation(ctx, org, w.conv.UserID, w.conv.ID)
		}},
		{"PutTurn", func(ctx context.Context) error { return f.PutTurn(ctx, w.turn) }},
		{"GetTurn", func(ctx context.Context) error { _, err := f.GetTurn(ctx, org, w.turn.ID); return err }},
		{"AppendMessage", func(ctx context.Context) error { _, err := f.AppendMessage(ctx, org, w.msg); return err }},
		{"AppendMessages", func(ctx context.Context) error {
			_, err := f.AppendMessages(ctx, org, []store.Message{w.msg, w.msg})
			return err
		}},
		{"ListMessages", func(ctx context.Context) error {
			_, err := f.ListMessages(ctx, org, w.msg.ConversationID, 0)
			return err
		}},
		{"PutResult", func(ctx context.Context) error { return f.PutResult(ctx, w.res, store.ResultQuota{}) }},
		{"GetResult", func(ctx context.Context) error {
			_, err := f.GetResult(ctx, w.res.OrgID, w.res.ConversationID, w.res.Ref)
			return err
		}},
		{"PutUsage", func(ctx context.Context) error { return f.PutUsage(ctx, w.use) }},
		{"ListUsage", func(ctx context.Context) error { _, err := f.ListUsage(ctx, org, w.use.TurnID); return err }},
		{"SumUsage", func(ctx context.Context) error {
			_, err := f.SumUsage(ctx, org, w.use.Payer, at(0), at(59))
			return err
		}},
	}
}

// mcpCalls returns a call of every MCPServers method on s.
func mcpCalls(f *fixture, s store.MCPServer) []call {
	return []call{
		{"CreateMCPServer", func(ctx context.Context) error { return f.CreateMCPServer(ctx, s, 0) }},
		{"GetMCPServer", func(ctx context.Context) error { _, err := f.GetMCPServer(ctx, s.OrgID, s.Name); return err }},
		{"ListMCPServers", func(ctx context.Context) error { _, err := f.ListMCPServers(ctx, s.OrgID); return err }},
		{"ListEnabledMCPServers", func(ctx context.Context) error {
			_, err := f.ListEnabledMCPServers(ctx, s.OrgID)
			return err
		}},
		{"SetMCPServerEnabled", func(ctx context.Context) error {
			return f.SetMCPServerEnabled(ctx, s.OrgID, s.Name, false, at(50))
		}},
		{"DeleteMCPServer", func(ctx context.Context) error { return f.DeleteMCPServer(ctx, s.OrgID, s.Name) }},
		{"SetMCPServerTools", func(ctx context.Context) error {
			_, err := f.SetMCPServerTools(ctx, s.OrgID, s.ID, []string{"x"}, at(50))
			return err
		}},
		{"CountMCPTokens", func(ctx context.Context) error { _, err := f.CountMCPTokens(ctx); return err }},
		{"RewrapMCPTokens", func(ctx context.Context) error {
			_, err := f.RewrapMCPTokens(ctx, func(s store.MCPServer) (string, error) { return s.Token, nil })
			return err
		}},
	}
}

// wantNothingWritten checks that the cancelled writes stored nothing.
func (f *fixture) wantNothingWritten(t *testing.T, w written) {
	_, err := f.GetConversation(t.Context(), w.conv.OrgID, w.conv.ID)
	wantNotFound(t, "GetConversation after cancelled PutConversation", err)
	_, err = f.GetTurn(t.Context(), w.turn.OrgID, w.turn.ID)
	wantNotFound(t, "GetTurn after cancelled PutTurn", err)
	if got := f.list(t, w.turn.OrgID, w.msg.ConversationID, 0); len(got) != 0 {
		t.Errorf("cancelled AppendMessage stored %+v", got)
	}
	_, err = f.GetResult(t.Context(), w.res.OrgID, w.res.ConversationID, w.res.Ref)
	wantNotFound(t, "GetResult after cancelled PutResult", err)
	if got := f.listUsage(t, w.use.OrgID, w.use.TurnID); len(got) != 0 {
		t.Errorf("cancelled PutUsage stored %+v", got)
	}
	_, err = f.GetMCPServer(t.Context(), w.mcp.OrgID, w.mcp.Name)
	wantNotFound(t, "GetMCPServer after cancelled CreateMCPServer", err)
	f.wantNoIntentWritten(t, w.intents)
	f.wantNoAccountWritten(t, w.accounts)
	f.wantSettings(t, "settings after cancelled PutOrgSettings and RewrapOrgSecrets", w.settings)
}
