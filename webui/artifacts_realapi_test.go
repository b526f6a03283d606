package webui_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// TestArtifactPanelAgainstHTTPAPI opens an artifact stored by the real
// store through package httpapi's routes (its session cookie on the
// frame's request, its sandboxing policy on the content): the HTML
// artifact saved after an inspection runs its inline script in the
// panel's frame, in the opaque origin, without reaching the page; a
// Markdown one renders from the same API.
func TestArtifactPanelAgainstHTTPAPI(t *testing.T) {
	ctx := context.Background()
	st, _, b := realAPI(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const conv = "conv_art"
	at := clock.Now().UTC().Add(-time.Minute)
	must(st.PutConversation(ctx, store.Conversation{ID: conv, OrgID: "org_a", UserID: "ana", Agent: "assistant", Title: "Pages", CreatedAt: at, UpdatedAt: at}))
	_, err := st.CreateArtifact(ctx, store.NewArtifact{Artifact: store.Artifact{OrgID: "org_a", ID: "art_page", OwnerID: "ana", ConversationID: conv,
		Title: "Page", Kind: store.ArtifactHTML, Content: artifactHTML("real", "A real page"), CreatedAt: at}, AsDraft: true, TurnID: "turn_r"}, store.ArtifactQuota{})
	must(err)
	must(st.MarkArtifactInspected(ctx, "org_a", conv, "art_page", 1))
	_, err = st.SaveArtifactDraft(ctx, "org_a", conv, "art_page", "turn_r", at)
	must(err)
	_, err = st.CreateArtifact(ctx, store.NewArtifact{Artifact: store.Artifact{OrgID: "org_a", ID: "art_notes", OwnerID: "ana", ConversationID: conv,
		Title: "Notes", Kind: store.ArtifactMarkdown, Content: "## Notes\n\n- one **point**", CreatedAt: at}, TurnID: "turn_r"}, store.ArtifactQuota{})
	must(err)
	must(st.PutTurn(ctx, store.Turn{ID: "turn_r", OrgID: "org_a", UserID: "ana", ConversationID: conv, Agent: "assistant",
		Model: "fake:model", Timezone: testZone, Status: store.TurnDone, StartedAt: at, EndedAt: at}))
	msg := func(role, content, name, call string) store.Message {
		return store.Message{ConversationID: conv, TurnID: "turn_r", Role: role, Content: content, ToolName: name, ToolCallID: call, CreatedAt: at}
	}
	_, err = st.AppendMessages(ctx, "org_a", []store.Message{
		msg("user", "Make a page and notes", "", ""),
		msg("tool_call", `{"title":"Page","kind":"html"}`, "create_artifact", "r1"),
		msg("tool", `Created artifact art_page "Page" (html): draft 1, not inspected yet. Call inspect_artifact to check it, then save_artifact.`, "create_artifact", "r1"),
		msg("tool_call", `{"id":"art_page"}`, "save_artifact", "r2"),
		msg("tool", `Saved artifact art_page "Page" (html): saved as version 1, shown to the user.`, "save_artifact", "r2"),
		msg("tool_call", `{"title":"Notes","kind":"markdown"}`, "create_artifact", "r3"),
		msg("tool", `Created artifact art_notes "Notes" (markdown): saved as version 1, shown to the user.`, "create_artifact", "r3"),
		msg("assistant", "Both are in the panel.", "", ""),
	})
	must(err)

	b.open("#/chat/"+conv, `.tool-card[data-call-id="r2"] .artifact-open`)
	b.listenFrames()
	b.WaitText(`#artifacts-button summary`, "Artifacts (2)")
	// The stored create card says what the artifact is now: saved.
	b.WaitText(`.tool-card[data-call-id="r1"] .artifact-open`, "Open artifact: Page")
	b.Do("open the page", chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="r2"] .artifact-open`)))
	b.until("panel shown", panelShown)
	b.until("the page framed", `!!document.querySelector('#artifact-body iframe')`)
	if got := eval[string](b, `document.querySelector('#artifact-body iframe').getAttribute('sandbox')`); got != "allow-scripts" {
		t.Errorf("sandbox %q", got)
	}
	got := b.framedSaid("real")
	if got.Reached != "SecurityError" || got.Origin != "null" || got.From != "null" {
		t.Errorf("the framed page: %+v, want a SecurityError from the null origin", got)
	}
	if eval[bool](b, `'pwned' in document.body.dataset`) {
		t.Error("the framed page changed the chat's document")
	}
	b.WaitText(`#artifact-version`, "Version 1 of 1")
	b.Do("open the notes", chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="r3"] .artifact-open`)))
	b.WaitText(`#artifact-body .md li`, "one point")
	if got := eval[string](b, `document.querySelector('#artifact-body .md h4')?.textContent ?? ''`); got != "Notes" {
		t.Errorf("the notes' heading %q", got)
	}
}
