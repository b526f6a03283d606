package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/store"
)

func TestCreateAndListConversations(t *testing.T) {
	f := newFixture(t, nil)

	var c httpapi.Conversation
	f.ok(f.do(f.bob, "POST", "/api/conversations", map[string]any{"agent": "helper", "title": "Units"}), http.StatusCreated, &c)
	want := httpapi.Conversation{ID: c.ID, Agent: "helper", Title: "Units", CreatedAt: start, UpdatedAt: start}
	if diff := cmp.Diff(want, c); diff != "" || len(c.ID) < 10 {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	stored, err := f.st.GetConversation(f.ctx, "org_a", c.ID)
	f.must(err)
	if stored.UserID != "bob" {
		t.Errorf("stored owner %q, want bob", stored.UserID)
	}

	f.clock.Advance(time.Minute)
	var c2 httpapi.Conversation
	f.ok(f.do(f.bob, "POST", "/api/conversations", map[string]any{"agent": "only-a"}), http.StatusCreated, &c2)

	// Empty conversations are stored, but listed only when asked for.
	var list struct{ Conversations []httpapi.Conversation }
	f.ok(f.do(f.bob, "GET", "/api/conversations", nil), 200, &list)
	if len(list.Conversations) != 0 {
		t.Errorf("list %+v: want no conversation without a message", list.Conversations)
	}
	f.ok(f.do(f.bob, "GET", "/api/conversations?include_empty=true", nil), 200, &list)
	if len(list.Conversations) != 2 || list.Conversations[0].ID != c2.ID {
		t.Errorf("list %+v: want the newer first", list.Conversations)
	}
	f.ok(f.do(f.bob, "GET", "/api/conversations?include_empty=true&limit=1", nil), 200, &list)
	if len(list.Conversations) != 1 {
		t.Errorf("limit=1 gave %d", len(list.Conversations))
	}

	// An agent of another organisation is as unknown as a made-up one.
	a := f.do(f.dave, "POST", "/api/conversations", map[string]any{"agent": "only-a"})
	wantError(t, a, http.StatusBadRequest, "unknown_agent")
	wantError(t, f.do(f.bob, "POST", "/api/conversations", map[string]any{"agent": "nope"}), http.StatusBadRequest, "unknown_agent")
	wantError(t, f.do(f.bob, "POST", "/api/conversations", map[string]any{}), http.StatusBadRequest, "invalid_request")
	wantError(t, f.do(f.bob, "POST", "/api/conversations", map[string]any{"agent": "helper", "owner": "alice"}), http.StatusBadRequest, "invalid_request")
	wantError(t, f.do(f.bob, "POST", "/api/conversations", "{not json"), http.StatusBadRequest, "invalid_request")
}

func TestGetConversationShowsPause(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")

	var c httpapi.Conversation
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob", nil), 200, &c)
	if c.Pause != nil || c.Running {
		t.Errorf("fresh conversation %+v: want no pause, not running", c)
	}
	f.pause("org_a", "bob", "conv_bob")
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob", nil), 200, &c)
	want := &httpapi.PendingPause{TurnID: "turn_p", Question: "Which unit?", Suggested: "metres"}
	if diff := cmp.Diff(want, c.Pause); diff != "" {
		t.Errorf("pause (-want +got):\n%s", diff)
	}
}

func TestTranscript(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	f.conversation("org_a", "alice", "conv_alice")
	for _, conv := range []string{"conv_bob", "conv_alice"} {
		_, err := f.st.AppendMessages(f.ctx, "org_a", []store.Message{
			{ConversationID: conv, TurnID: "t1", Role: "user", Content: "hi", CreatedAt: start},
			{ConversationID: conv, TurnID: "t1", Role: store.RoleThought, Content: "calculator: always on", CreatedAt: start},
			{ConversationID: conv, TurnID: "t1", Role: "assistant", Content: "", CreatedAt: start},
			{ConversationID: conv, TurnID: "t1", Role: "tool_call", ToolName: "calculate", ToolCallID: "c1", Content: `{"expression":"1+1"}`, CreatedAt: start},
			{ConversationID: conv, TurnID: "t1", Role: "tool", ToolName: "calculate", ToolCallID: "c1", Content: "2", Ref: "res_1", CreatedAt: start},
			{ConversationID: conv, TurnID: "t1", Role: "assistant", Content: "It is 2.", CreatedAt: start},
		})
		f.must(err)
	}
	roles := func(ms []httpapi.Message) []string {
		var rs []string
		for _, m := range ms {
			rs = append(rs, m.Role)
		}
		return rs
	}
	var page struct {
		Messages []httpapi.Message
		More     bool
	}
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob/messages", nil), 200, &page)
	if diff := cmp.Diff([]string{"user", "assistant", "tool_call", "tool", "assistant"}, roles(page.Messages)); diff != "" || page.More {
		t.Errorf("member's transcript roles (-want +got):\n%s more=%v", diff, page.More)
	}
	tool := page.Messages[3]
	if tool.ToolName != "calculate" || tool.ToolCallID != "c1" || tool.Ref != "res_1" || tool.Content != "2" || tool.TurnID != "t1" {
		t.Errorf("tool message %+v", tool)
	}

	f.ok(f.do(f.alice, "GET", "/api/conversations/conv_alice/messages", nil), 200, &page)
	if diff := cmp.Diff([]string{"user", "thought", "assistant", "tool_call", "tool", "assistant"}, roles(page.Messages)); diff != "" {
		t.Errorf("admin's transcript roles (-want +got):\n%s", diff)
	}

	f.ok(f.do(f.alice, "GET", "/api/conversations/conv_alice/messages?limit=2", nil), 200, &page)
	if len(page.Messages) != 2 || !page.More || page.Messages[1].Content != "It is 2." {
		t.Fatalf("limit=2: %+v more=%v", page.Messages, page.More)
	}
	before := page.Messages[0].Seq
	f.ok(f.do(f.alice, "GET", "/api/conversations/conv_alice/messages?limit=10&before="+strconv.FormatInt(before, 10), nil), 200, &page)
	if len(page.Messages) != 4 || page.More || page.Messages[3].Seq >= before {
		t.Errorf("the page before %d: %+v more=%v", before, page.Messages, page.More)
	}
	wantError(t, f.do(f.bob, "GET", "/api/conversations/conv_bob/messages?limit=0", nil), http.StatusBadRequest, "invalid_request")
}

func TestInspect(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")

	var ins httpapi.Inspection
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob/inspect?message=weather%3F", nil, "X-Timezone: Asia/Tokyo"), 200, &ins)
	if ins.Context != "caller bob in Asia/Tokyo: weather?" || ins.System != "You help." {
		t.Errorf("inspection %+v", ins)
	}
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob/inspect?turn=turn_7", nil), 200, &ins)
	if ins.TurnID != "turn_7" || ins.Context != "caller bob in Europe/Paris: " {
		t.Errorf("inspection of a stored turn %+v", ins)
	}
	r := f.do(f.bob, "GET", "/api/conversations/conv_bob/inspect?turn=turn_missing", nil)
	wantError(t, r, http.StatusBadRequest, "invalid_request")
	if got := string(r.body); got != `{"error":{"code":"invalid_request","message":"no such turn in this conversation"}}`+"\n" {
		t.Errorf("body %s", got)
	}
}

// TestTitles: an untitled conversation is named after the first message
// sent to it; a titled one, later messages and answers leave it be.
func TestTitles(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.RateLimit.Burst = -1 })
	long := strings.Repeat("é", 58) + "🙂🙂" // 60 runes
	for i, tc := range []struct {
		name, message, want string
	}{
		{"first line", "Convert 3 metres to feet\nplease, quickly", "Convert 3 metres to feet"},
		{"trimmed", "  \r\n\t Weather in Hanoi?  \r\nthanks", "Weather in Hanoi?"},
		{"60 runes kept whole", long, long},
		{"cut after 60 runes", long + "x and more", long + "…"},
		{"cut on a rune boundary", strings.Repeat("a", 59) + "🙂🙂🙂", strings.Repeat("a", 59) + "🙂…"},
		// A NUL and other controls would be refused by PostgreSQL's
		// text; a tab has no place in a title either (store.CleanTitle).
		{"controls as spaces", "tab\tnul\x00bell\x07", "tab nul bell"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "conv_" + strconv.Itoa(i)
			f.conversation("org_a", "bob", id)
			f.ok(f.do(f.bob, "POST", "/api/conversations/"+id+"/messages", map[string]any{"message": tc.message}), http.StatusOK, nil)
			c, err := f.st.GetConversation(f.ctx, "org_a", id)
			f.must(err)
			if c.Title != tc.want {
				t.Errorf("title %q, want %q", c.Title, tc.want)
			}
			f.ok(f.do(f.bob, "POST", "/api/conversations/"+id+"/messages", map[string]any{"message": "something else"}), http.StatusOK, nil)
			if c, _ := f.st.GetConversation(f.ctx, "org_a", id); c.Title != tc.want {
				t.Errorf("a second message retitled the conversation %q", c.Title)
			}
		})
	}

	var titled httpapi.Conversation
	f.ok(f.do(f.bob, "POST", "/api/conversations", map[string]any{"agent": "helper", "title": "Units"}), http.StatusCreated, &titled)
	f.ok(f.do(f.bob, "POST", "/api/conversations/"+titled.ID+"/messages", map[string]any{"message": "hello"}), http.StatusOK, nil)
	f.ok(f.do(f.bob, "GET", "/api/conversations/"+titled.ID, nil), http.StatusOK, &titled)
	if titled.Title != "Units" {
		t.Errorf("a titled conversation became %q", titled.Title)
	}

	f.conversation("org_a", "bob", "conv_paused")
	f.pause("org_a", "bob", "conv_paused")
	f.ok(f.do(f.bob, "POST", "/api/conversations/conv_paused/answer", map[string]any{"answer": "metres"}), http.StatusOK, nil)
	if c, _ := f.st.GetConversation(f.ctx, "org_a", "conv_paused"); c.Title != "" {
		t.Errorf("an answer titled the conversation %q", c.Title)
	}
}

// TestInjectedIDs: the ids the API makes come from Config.IDs, so a test
// reads them instead of matching random ones.
func TestInjectedIDs(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.IDs = &ids.Sequence{} })
	for _, want := range []string{"conv_1", "conv_2"} {
		var c httpapi.Conversation
		f.ok(f.do(f.bob, "POST", "/api/conversations", map[string]any{"agent": "helper"}), http.StatusCreated, &c)
		if c.ID != want {
			t.Errorf("conversation id %q, want %q", c.ID, want)
		}
	}
	var nu newUser
	f.ok(f.do(f.alice, "POST", "/api/users", map[string]any{"display_name": "Eve"}), http.StatusCreated, &nu)
	if nu.User.ID != "usr_1" {
		t.Errorf("user id %q, want usr_1", nu.User.ID)
	}
}
