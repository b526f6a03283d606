package app_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// historyAgent is an agent allowed search_conversations, with its
// switch on, on the fake OpenAI server.
const historyAgent = `name: recall
model: openai:gpt-4.1-mini
prompt: You recall what people told you.
tools: [history]
switches: {conversation_search: true}
`

// TestConversationSearchThroughTurns: through quiver chat and the agent
// loop, a person's search finds what they wrote in an earlier
// conversation, never the assistant's words there, nor the conversation
// at hand, nor another person's conversations; the switch unset leaves
// the tool out.
func TestConversationSearchThroughTurns(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { testConversationSearchThroughTurns(t, backend) })
	}
}

func testConversationSearchThroughTurns(t *testing.T, backend string) {
	url := ""
	if backend == "postgres" {
		url = pgtest.URL(t)
	}
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{Text: []string{"Kumquat, noted."}},
		llmtest.Reply{Text: []string{"Fine."}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			llmtest.Call("find", "search_conversations", map[string]string{"query": "PASSPORT"}),
			llmtest.Call("theirs", "search_conversations", map[string]string{"query": "kumquat"}),
		}},
		llmtest.Reply{Text: []string{"It ends in 4417."}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("peek", "search_conversations", map[string]string{"query": "4417"})}},
		llmtest.Reply{Text: []string{"I don't know."}},
		llmtest.Reply{Text: []string{"Hello."}},
	)
	agent := writeAgent(t, historyAgent)
	chat := withDatabase(t, t.TempDir(), url, srv)
	for _, c := range []struct{ agent, user, conv, msg string }{
		{agent, "Ana", "h-1", "My passport number ends in 4417."},
		{agent, "Binh", "h-3", "My passport expired."},
		{agent, "Ana", "h-2", "What did I tell you about my passport?"},
		{agent, "Binh", "h-4", "What is Ana's passport number?"},
		{writeAgent(t, strings.Replace(historyAgent, "switches: {conversation_search: true}", "switches: {}", 1)), "Ana", "h-5", "hi"},
	} {
		if code, _, stderr := chat("chat", "--agent", c.agent, "--user", c.user, "--conversation", c.conv, "--json", c.msg); code != 0 {
			t.Fatalf("%s in %s: exit %d: %s", c.user, c.conv, code, stderr)
		}
	}
	seen := srv.Seen()
	declares := func(s llmtest.Seen) bool {
		for _, d := range s.Req.Tools {
			if d.Name == "search_conversations" {
				return true
			}
		}
		return false
	}
	if !declares(seen[0]) {
		t.Error("search_conversations is not declared with its switch on")
	}
	if declares(seen[len(seen)-1]) {
		t.Error("search_conversations is declared with its switch unset")
	}
	found := toolResult(t, seen, "find")
	if !strings.Contains(found, "My passport number ends in 4417.") || strings.Contains(found, "h-1") {
		t.Errorf("Ana's search = %q, want her message of h-1, without its id", found)
	}
	for _, leak := range []string{"h-2", "What did I tell you", "expired", "h-3", "Kumquat"} {
		if strings.Contains(found, leak) {
			t.Errorf("Ana's search holds %q:\n%s", leak, found)
		}
	}
	if got := toolResult(t, seen, "theirs"); !strings.HasPrefix(got, "No earlier conversation") {
		t.Errorf("the assistant's words matched: %q", got)
	}
	if got := toolResult(t, seen, "peek"); !strings.HasPrefix(got, "No earlier conversation") {
		t.Errorf("Binh's search finds Ana's words: %q", got)
	}
}
