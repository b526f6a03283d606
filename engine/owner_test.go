package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
)

// brokenConversations fails every read and claim.
type brokenConversations struct{ store.Conversations }

func (brokenConversations) GetConversation(context.Context, string, string) (store.Conversation, error) {
	return store.Conversation{}, errors.New("disk gone")
}

func (brokenConversations) ClaimConversation(context.Context, store.Conversation) (store.Conversation, error) {
	return store.Conversation{}, errors.New("disk gone")
}

// anasConversation stores conv_a, Ana's, and returns it.
func anasConversation(t *testing.T, st store.Conversations) store.Conversation {
	t.Helper()
	c := store.Conversation{ID: "conv_a", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}
	if err := st.PutConversation(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCheckConversationID(t *testing.T) {
	for id, want := range map[string]error{
		"":                   nil,
		"conv_1":             nil,
		"my-console-ana":     nil,
		"console-ana":        engine.ErrConsoleConversation,
		engine.ConsolePrefix: engine.ErrConsoleConversation,
	} {
		if err := engine.CheckConversationID(id); err != want {
			t.Errorf("CheckConversationID(%q) = %v, want %v", id, err, want)
		}
	}
}

// TestCheckOwner: the caller's conversation and a missing one pass,
// another user's and a console id are refused, and nothing is written.
func TestCheckOwner(t *testing.T) {
	ctx := context.Background()
	_, st := newEngine(t)
	anasConversation(t, st)
	for _, tc := range []struct {
		name string
		r    engine.Request
		want error
	}{
		{"owner", request("ana", "conv_a", true), nil},
		{"missing", request("bo", "conv_x", true), nil},
		{"another user", request("bo", "conv_a", true), engine.ErrOthersConversation},
		{"console", request("ana", "console-ana", true), engine.ErrConsoleConversation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := engine.CheckOwner(ctx, st, tc.r); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("CheckOwner = %v, want %v", err, tc.want)
			}
		})
	}
	for _, id := range []string{"conv_x", "console-ana"} {
		if _, err := st.GetConversation(ctx, "acme", id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after CheckOwner, GetConversation(%q) = %v, want ErrNotFound", id, err)
		}
	}
	err := engine.CheckOwner(ctx, brokenConversations{}, request("ana", "conv_a", true))
	if err == nil || err.Error() != "load conversation: disk gone" {
		t.Errorf("CheckOwner over a failing store = %v, want load conversation: disk gone", err)
	}
}

// TestClaim: a missing conversation is created for the caller, with the
// request's agent and the time in UTC; the caller's own is stamped;
// another user's and a console id are refused with nothing written.
func TestClaim(t *testing.T) {
	ctx := context.Background()
	_, st := newEngine(t)
	anas := anasConversation(t, st)
	later := start.Add(time.Hour).In(time.FixedZone("ICT", 7*3600))
	get := func(id string) store.Conversation {
		t.Helper()
		c, err := st.GetConversation(ctx, "acme", id)
		if err != nil {
			t.Fatalf("GetConversation(%q): %v", id, err)
		}
		return c
	}

	if err := engine.Claim(ctx, st, request("bo", "conv_b", true), later); err != nil {
		t.Fatalf("Claim of a new conversation: %v", err)
	}
	want := store.Conversation{ID: "conv_b", OrgID: "acme", UserID: "bo", Agent: "helper", CreatedAt: later.UTC(), UpdatedAt: later.UTC()}
	if diff := cmp.Diff(want, get("conv_b")); diff != "" {
		t.Errorf("the claimed conversation (-want +got):\n%s", diff)
	}

	byName := request("bo", "conv_c", true)
	byName.Agent, byName.AgentName = nil, "stored-agent"
	if err := engine.Claim(ctx, st, byName, later); err != nil || get("conv_c").Agent != "stored-agent" {
		t.Errorf("Claim with AgentName: %v, agent %q; want stored-agent", err, get("conv_c").Agent)
	}

	if err := engine.Claim(ctx, st, request("ana", "conv_a", true), later); err != nil || !get("conv_a").UpdatedAt.Equal(later) {
		t.Errorf("Claim of the caller's own: %v, updated %v; want nil and %v", err, get("conv_a").UpdatedAt, later)
	}
	anas.UpdatedAt = later.UTC()

	if err := engine.Claim(ctx, st, request("bo", "conv_a", true), later.Add(time.Hour)); !errors.Is(err, engine.ErrOthersConversation) {
		t.Errorf("Claim of another user's = %v, want ErrOthersConversation", err)
	}
	if diff := cmp.Diff(anas, get("conv_a")); diff != "" {
		t.Errorf("another user's claim changed the conversation (-want +got):\n%s", diff)
	}

	if err := engine.Claim(ctx, st, request("ana", "console-ana", true), later); !errors.Is(err, engine.ErrConsoleConversation) {
		t.Errorf("Claim of a console id = %v, want ErrConsoleConversation", err)
	}
	if _, err := st.GetConversation(ctx, "acme", "console-ana"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a console id was claimed: GetConversation = %v, want ErrNotFound", err)
	}

	err := engine.Claim(ctx, brokenConversations{}, request("ana", "conv_a", true), later)
	if err == nil || !strings.HasPrefix(err.Error(), "create conversation: ") {
		t.Errorf("Claim over a failing store = %v, want create conversation: ...", err)
	}
}
