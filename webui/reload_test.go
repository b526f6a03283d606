package webui_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReloadedTurnShowsChecklistAndChart opens a stored conversation whose
// turn kept a checklist (two update_tasks calls, the second the one that
// stands) and ran code that saved two charts, one since deleted: the page
// shows the checklist as it last stood, where it first appeared, and the
// chart still in the workspace under its tool card, and says the other is
// gone.
func TestReloadedTurnShowsChecklistAndChart(t *testing.T) {
	api := newStubAPI()
	var pic bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	img.Set(3, 3, color.RGBA{R: 200, A: 255})
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	api.workspace = map[string][]byte{"charts/sales.png": pic.Bytes()}
	const conv = "conv_work"
	api.convs[conv] = &stubConversation{ID: conv, Agent: "assistant", Title: "Sales chart",
		Created: time.Date(2026, 1, 6, 9, 0, 0, 0, time.UTC), Updated: time.Date(2026, 1, 6, 9, 5, 0, 0, time.UTC)}
	seq := 0
	msg := func(role, content string, extra ...string) map[string]any {
		seq++
		m := map[string]any{"seq": seq, "turn_id": "turn_w", "role": role, "content": content, "created_at": "2026-01-06T09:00:00Z"}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	api.stored = map[string][]map[string]any{conv: {
		msg("user", "Chart last quarter's sales"),
		msg("tool_call", `{"tasks":[{"text":"Load   the figures","status":"in_progress"},{"text":"Draw the chart","status":"pending"}]}`, "tool_name", "update_tasks", "tool_call_id", "c1"),
		msg("tool", "[>] Load the figures\n[ ] Draw the chart", "tool_name", "update_tasks", "tool_call_id", "c1"),
		msg("tool_call", `{"code":"plot()"}`, "tool_name", "run_code", "tool_call_id", "c2"),
		msg("tool", "Output:\nok\nFiles written to the workspace:\n- charts/sales.png (1.2 KiB, image/png)\n- old.png (3 bytes, image/png)\n- data.csv (9 bytes, text/csv)", "tool_name", "run_code", "tool_call_id", "c2"),
		msg("tool_call", `{"tasks":[{"text":"Load the figures","status":"completed"},{"text":"Draw the chart","status":"completed"}]}`, "tool_name", "update_tasks", "tool_call_id", "c3"),
		msg("tool", "[x] Load the figures\n[x] Draw the chart", "tool_name", "update_tasks", "tool_call_id", "c3"),
		msg("tool_call", `{"tasks":[{"text":"x","status":"in_progress"},{"text":"y","status":"in_progress"}]}`, "tool_name", "update_tasks", "tool_call_id", "c4"),
		msg("tool", "steps 1 and 2 are both in_progress", "tool_name", "update_tasks", "tool_call_id", "c4"),
		msg("assistant", "Here is the chart."),
	}}
	api.stored[conv][8]["is_error"] = true // the refused list changes nothing
	b := newBrowser(t, api)
	b.login()
	b.open("#/chat/"+conv, `.transcript .turn-checklist`)
	b.until("the deleted chart said gone", `[...document.querySelectorAll('.tool-card[data-call-id="c2"] figcaption')].some(f => f.textContent.includes('no longer'))`)
	b.until("the chart loaded", `document.querySelector('.tool-card[data-call-id="c2"] figure img')?.complete === true`)

	steps := eval[[]string](b, `[...document.querySelectorAll('.transcript .turn-checklist .step')].map(li => li.className + '|' + li.lastChild.textContent)`)
	if d := cmp.Diff([]string{"step done|Load the figures", "step done|Draw the chart"}, steps); d != "" {
		t.Errorf("checklist (-want +got):\n%s", d)
	}
	if n := eval[int](b, `document.querySelectorAll('.transcript .turn-checklist').length`); n != 1 {
		t.Errorf("%d checklists, want one", n)
	}
	if !eval[bool](b, `!!(document.querySelector('.transcript .checklist-item').compareDocumentPosition(document.querySelector('.tool-card[data-call-id="c2"]')) & Node.DOCUMENT_POSITION_FOLLOWING)`) {
		t.Error("the checklist is not where it first appeared, above the work after it")
	}
	type figure struct {
		Src     string
		Width   int
		Caption string
	}
	figs := eval[[]figure](b, `[...document.querySelectorAll('.tool-card[data-call-id="c2"] figure')].map(f => ({
		Src: f.querySelector('img')?.getAttribute('src') ?? '', Width: f.querySelector('img')?.naturalWidth ?? 0,
		Caption: f.querySelector('figcaption').textContent }))`)
	want := []figure{
		{Src: "/api/workspace/file?path=charts%2Fsales.png", Width: 40, Caption: "charts/sales.png"},
		{Caption: "old.png is no longer in your workspace."},
	}
	if d := cmp.Diff(want, figs); d != "" {
		t.Errorf("figures (-want +got):\n%s", d)
	}
	if !eval[bool](b, `document.querySelector('.tool-card[data-call-id="c2"] figure img').getBoundingClientRect().height > 0`) {
		t.Error("the chart is not visible with its card closed")
	}
	b.Shot("reloaded-checklist-chart")
}
