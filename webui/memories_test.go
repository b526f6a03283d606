package webui_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// putMemory stores a memory of owner ("" shared) in org_a, embedded by
// the local embedder.
func putMemory(t *testing.T, st store.Store, owner, id, text string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	vs, err := embed.Local{}.Embed(ctx, []string{text}, embed.Document)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutMemory(ctx, store.Memory{OrgID: "org_a", ID: id, OwnerID: owner, Text: text, CreatedAt: at,
		Model: embed.Local{}.Model().String(), Vector: embed.Pack(vs[0])}, 0); err != nil {
		t.Fatal(err)
	}
}

// memoryTexts are the texts a memories section lists, in order.
func (b *browser) memoryTexts(scope string) []string {
	b.t.Helper()
	return eval[[]string](b, fmt.Sprintf(`Array.from(document.querySelectorAll('#memories-%s li.memory .memory-text'), (p) => p.textContent)`, scope))
}

// TestMemoriesEditDeleteAndPrivacy: over the real API, Ana lists her
// memories newest first and the shared ones (she is an admin), searches,
// edits one in place (stored re-embedded) and deletes one after a
// confirmation; Bruno, a member of the same organisation, sees none of
// hers and no shared section.
func TestMemoriesEditDeleteAndPrivacy(t *testing.T) {
	st, _, b := realAPI(t)
	ctx := context.Background()
	now := clock.Now().UTC()
	putMemory(t, st, "ana", "m1", "Ana prefers tea to coffee", now.Add(-2*time.Hour))
	putMemory(t, st, "ana", "m2", "Ana's budget reports are due on Fridays", now.Add(-time.Hour))
	putMemory(t, st, "", "ms", "The office is closed on public holidays", now)

	b.open("#/memories", `#memories-personal li[data-memory="m1"]`)
	b.Do("shared listed", chromedp.WaitVisible(chromedp.CSS(`#memories-shared li[data-memory="ms"]`)))
	if d := cmp.Diff([]string{"Ana's budget reports are due on Fridays", "Ana prefers tea to coffee"}, b.memoryTexts("personal")); d != "" {
		t.Errorf("Ana's memories (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"The office is closed on public holidays"}, b.memoryTexts("shared")); d != "" {
		t.Errorf("shared memories (-want +got):\n%s", d)
	}
	b.Shot("listed")

	// Search by words, through the API.
	b.Do("search", chromedp.SetValue(chromedp.CSS(`#memories-personal-q`), "tea"),
		chromedp.Click(chromedp.CSS(`#memories-personal-search`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#memories-personal li[data-memory="m2"]`)))
	if d := cmp.Diff([]string{"Ana prefers tea to coffee"}, b.memoryTexts("personal")); d != "" {
		t.Errorf("search for tea (-want +got):\n%s", d)
	}
	b.Do("clear the search", chromedp.Evaluate[chromedp.Void](`document.getElementById('memories-personal-q').value = ''`),
		chromedp.Click(chromedp.CSS(`#memories-personal-search`)),
		chromedp.WaitVisible(chromedp.CSS(`#memories-personal li[data-memory="m2"]`)))

	// Edit in place.
	li := `#memories-personal li[data-memory="m1"]`
	b.Do("edit", chromedp.Click(chromedp.CSS(li+` button.edit-memory`)), chromedp.WaitVisible(chromedp.CSS(`#memory-edit-m1`)))
	b.Shot("editing")
	b.Do("save", chromedp.SetValue(chromedp.CSS(`#memory-edit-m1`), "Ana prefers green tea, never coffee"),
		chromedp.Click(chromedp.CSS(li+` button.save-memory`)), chromedp.WaitVisible(chromedp.CSS(li+` button.edit-memory`)))
	b.WaitText(li+` .memory-text`, "Ana prefers green tea, never coffee")
	m, err := st.GetMemory(ctx, "org_a", "ana", "m1")
	if err != nil || m.Text != "Ana prefers green tea, never coffee" {
		t.Fatalf("stored after the edit: %+v, %v", m, err)
	}
	if hits, err := st.SearchMemories(ctx, store.MemorySearch{OrgID: "org_a", OwnerID: "ana", Text: "green"}); err != nil || len(hits) != 1 {
		t.Errorf("the edit is not searchable: %+v, %v", hits, err)
	}

	// Delete, after saying no once and yes once.
	del := `#memories-personal li[data-memory="m2"] button.delete-memory`
	b.Do("delete", chromedp.Click(chromedp.CSS(del)))
	b.confirmDialog("Delete the memory “Ana's budget reports are due on Fridays”?", "no")
	if _, err := st.GetMemory(ctx, "org_a", "ana", "m2"); err != nil {
		t.Fatalf("answering no deleted the memory: %v", err)
	}
	b.Do("delete again", chromedp.Click(chromedp.CSS(del)))
	b.confirmDialog("Agents will no longer remember it.", "yes")
	b.Do("gone", chromedp.WaitNotPresent(chromedp.CSS(`#memories-personal li[data-memory="m2"]`)))
	b.WaitText(`#memories-status`, "Memory deleted.")
	if n, err := st.CountMemories(ctx, "org_a", "ana"); err != nil || n != 1 {
		t.Errorf("Ana holds %d memories after the delete (%v), want 1", n, err)
	}
	b.Shot("deleted")

	// Bruno, a member, sees none of Ana's and no shared section.
	if err := st.CreateUser(ctx, store.User{ID: "bruno", OrgID: "org_a", DisplayName: "Bruno Costa", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	link, err := (&accounts.Service{Store: st}).Issue(ctx, store.Credential{Kind: store.CredLoginLink, OrgID: "org_a", UserID: "bruno",
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		ctx, cancel := b.Step()
		defer cancel()
		if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
			t.Fatalf("clear cookies: %v", err)
		}
	}()
	b.Do("open Bruno's link", chromedp.Navigate(b.srv.URL+"/login?token="+link), chromedp.WaitVisible(chromedp.CSS(`#sign-in[data-armed]`)))
	b.Do("sign in as Bruno", chromedp.Click(chromedp.CSS(`#sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#nav`)))
	b.open("#/memories", `#memories-personal-none`)
	b.WaitText(`#memories-personal-none`, "Agents remember nothing about you yet.")
	if n := eval[int](b, `document.querySelectorAll('li.memory, #memories-shared').length`); n != 0 {
		t.Errorf("Bruno sees %d memories or sections of others", n)
	}
	b.Shot("other-user")
}
