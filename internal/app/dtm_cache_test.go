package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// cacheScript is a 50-message conversation: mostly chat, with requests for
// a few families spread through it, as a companion bot sees.
var cacheScript = []string{
	"hey, how's it going?", "not much, just got back from work", "what's 18% of 240?", "thanks!",
	"do you like jazz?", "I was listening to Coltrane all afternoon", "who's your favourite musician?",
	"search for the latest news about the Artemis mission", "wow, that's exciting", "when do you think they'll land?",
	"lol fair", "I'm making pasta tonight", "any tips for carbonara?", "no cream, got it",
	"remind me at 7pm to take the pasta off the stove", "cool", "so what did you do today?", "haha",
	"draw a picture of a cat eating carbonara", "that's adorable", "do it again but in watercolour",
	"ok I love it", "tell me a joke", "that was terrible", "another one", "ok stop",
	"what's the weather in Hanoi today?", "nice, sunny", "I might go for a run", "how far should I run?",
	"5k sounds good", "calculate my pace if I run 5k in 27 minutes", "not bad", "I'm tired now",
	"good night", "morning!", "slept well", "what should I have for breakfast?", "eggs it is",
	"remember that I'm allergic to peanuts", "thanks for remembering", "what's on your mind?",
	"I'm thinking about learning Go", "is it hard?", "look up a good Go tutorial for beginners",
	"great, bookmarked", "I'll start tomorrow", "wish me luck", "thanks!", "bye",
}

// standIns are tools of families Quiver does not ship yet, sized like real
// ones, so the measurement sees every family the script opens.
func standIns() []*tool.Tool {
	mk := func(name, family, desc string) *tool.Tool {
		schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
			"prompt": {Type: "string", Description: "What to do, in the user's words, with every detail that matters."},
			"when":   {Type: "string", Description: "When, as an ISO 8601 time or a relative phrase."},
		}}
		return tool.NewRaw(tool.Spec{Name: name, Family: family, Description: desc}, schema,
			func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil })
	}
	return []*tool.Tool{
		mk("generate_image", "image", "Generates an image from a detailed prompt. Use only when the user asks for a picture."),
		mk("generate_anime_image", "image", "Generates an anime-style image from tags. Use only when asked for anime art."),
		mk("review_capabilities", "capabilities", "Reads what this agent can do right now and why a tool is unavailable."),
	}
}

// TestDeliberateModeCacheStability measures, over a scripted 50-message
// conversation, how often the declared tool list changes from one turn to
// the next and how many bytes of the request prefix (tool definitions,
// then the system prompt) stay identical, with the mode off, with naive
// per-message gating, and with Quiver's rule (targets stay open for the
// conversation, in the order they opened, after the always-on helpers),
// also for a community that gates the helpers too. Run with -v for the
// table.
func TestDeliberateModeCacheStability(t *testing.T) {
	base := builtin.NewCatalog(builtin.CatalogDeps{})
	cat := base.With(registry.Overlay{Tools: standIns()})
	allow := []string{"web_search", "fetch_url", "research_web", "tasks", "memory", "image", "capabilities"}
	f := turn.Facts{
		TurnID: "t", Start: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
		// The memory family is Quiver's own: on, with an embedding model.
		Agent:    turn.Agent{Name: "companion", Allow: allow, Switches: map[string]bool{"memory": true}},
		Model:    turn.Model{Provider: "openai", Name: "gpt-4.1-mini", Caps: turn.Capabilities{Tools: true}},
		Backends: []string{"embedding"},
	}
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	det := intent.New(packs)
	selected := cat.Select(f)
	// "learned": sticky with the classifier beside the packs and the
	// recovery tool declared, as quiver serve runs the mode.
	c, err := intent.BuiltinClassifier()
	if err != nil {
		t.Fatal(err)
	}
	learnedDet := det.WithClassifier(c, 0)
	fl := f
	fl.Deliberate = true
	learnedSel := cat.Select(fl)
	var learnedOpen []string

	type stats struct {
		changed, stableBytes, totalBytes, defBytes int
		prev                                       string
	}
	strategies := []string{"off", "naive", "sticky", "gated", "learned"}
	st := map[string]*stats{}
	for _, s := range strategies {
		st[s] = &stats{}
	}
	var open []string
	var history []intent.Message
	for i, msg := range cacheScript {
		res := det.Detect(intent.Input{Text: msg, History: history, HistoryTurns: 0})
		for _, target := range res.Targets {
			if !slices.Contains(open, target) {
				open = append(open, target)
			}
		}
		for _, target := range learnedDet.Detect(intent.Input{Text: msg, History: history, HistoryTurns: 0}).Targets {
			if !slices.Contains(learnedOpen, target) {
				learnedOpen = append(learnedOpen, target)
			}
		}
		sets := map[string]registry.Toolset{
			"off":     selected,
			"naive":   intent.Gate(selected, cat, res.Targets, intent.GateOptions{}), // this message's targets only
			"sticky":  intent.Gate(selected, cat, open, intent.GateOptions{}),
			"gated":   intent.Gate(selected, cat, open, intent.GateOptions{GateAlwaysOn: true}),
			"learned": intent.Gate(learnedSel, cat, learnedOpen, intent.GateOptions{}),
		}
		for _, s := range strategies {
			ff := f
			if s == "learned" {
				ff = fl
			}
			req, err := prompt.Assemble(ff, sets[s])
			if err != nil {
				t.Fatal(err)
			}
			defs, _ := json.Marshal(req.Tools)
			prefix := string(defs) + req.System
			x := st[s]
			if i > 0 {
				if prefix != x.prev {
					x.changed++
				}
				x.stableBytes += commonPrefix(prefix, x.prev)
			}
			x.totalBytes += len(prefix)
			x.defBytes += len(defs)
			x.prev = prefix
		}
		history = append(history, intent.Message{Role: intent.RoleUser, Text: msg})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-7s %14s %22s %18s %22s\n", "mode", "turns changed", "stable prefix bytes", "prefix bytes sent", "definition bytes sent")
	for _, s := range strategies {
		x := st[s]
		fmt.Fprintf(&b, "%-7s %14d %22d %18d %22d\n", s, x.changed, x.stableBytes, x.totalBytes, x.defBytes)
	}
	t.Log(b.String())
	t.Logf("targets opened, in order: %v (with the classifier: %v)", open, learnedOpen)
	if st["off"].changed != 0 {
		t.Errorf("mode off changed the prefix on %d turns", st["off"].changed)
	}
	for _, s := range []string{"sticky", "gated"} {
		if st[s].changed > len(open) {
			t.Errorf("%s changed on %d turns, more than the %d targets it opened", s, st[s].changed, len(open))
		}
	}
	if st["gated"].defBytes >= st["sticky"].defBytes {
		t.Errorf("gating the helpers too sent %d definition bytes, not fewer than keeping them (%d)", st["gated"].defBytes, st["sticky"].defBytes)
	}
	if st["sticky"].changed >= st["naive"].changed {
		t.Errorf("sticky (%d changes) is not more stable than naive gating (%d)", st["sticky"].changed, st["naive"].changed)
	}
	if st["sticky"].defBytes >= st["off"].defBytes {
		t.Errorf("sticky sent %d definition bytes, not fewer than mode off (%d)", st["sticky"].defBytes, st["off"].defBytes)
	}
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
