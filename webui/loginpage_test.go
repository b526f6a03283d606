package webui_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// look is what a page's stylesheet made of it.
type look struct{ Background, Text, Font, CardBorder string }

// pageLook reads the page's colours and type; CardBorder is the login
// card's border style ("" when the page has none).
func (b *browser) pageLook() look {
	b.t.Helper()
	return eval[look](b, `(() => { const s = getComputedStyle(document.body); const c = document.querySelector('.login-card');
		return { Background: s.backgroundColor, Text: s.color, Font: s.fontFamily,
			CardBorder: c ? getComputedStyle(c).borderTopStyle : '' }; })()`)
}

// TestLoginPagesLookLikeTheUI: the pages a login link opens when it does
// not sign in (httpapi's, served with their own policy) are styled by the
// UI's stylesheet (no CSP violation: browsertest fails on one), fit a
// phone, and the failure page sends people to the People page by its
// name.
func TestLoginPagesLookLikeTheUI(t *testing.T) {
	eachWidth(t, func(t *testing.T, vp width) {
		st, _, b := realAPI(t)
		b.use(vp)
		b.open("#/chat", `main h1`)
		app := b.pageLook()

		b.Do("open a used link", chromedp.Navigate(b.srv.URL+"/login?token=not-a-working-link"),
			chromedp.WaitVisible(chromedp.CSS(`.login-card h1`)))
		b.WaitText(`.login-card h1`, "This login link does not work")
		got := b.pageLook()
		if want := (look{Background: app.Background, Text: app.Text, Font: app.Font, CardBorder: "solid"}); got != want {
			t.Errorf("the failure page looks like %+v, want the UI's %+v", got, want)
		}
		b.fits(vp, "the failure page")
		b.Shot("login-failed")
		if href := eval[string](b, `[...document.querySelectorAll('.login-card a')].find(a => a.textContent === 'People')?.getAttribute('href') ?? ''`); href != "/#/people" {
			t.Fatalf("the failure page's People link: %q, want /#/people", href)
		}
		// Ana is an admin: the link opens the page where she makes a new
		// login link.
		b.Do("follow People", chromedp.Click(chromedp.CSS(`.login-card a[href="/#/people"]`)),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-user="ana"] button.new-link`)))
		b.WaitText(`main h1`, "People")

		// A link of another account, opened while signed in as Ana.
		ctx := context.Background()
		now := clock.Now().UTC()
		if err := st.CreateUser(ctx, store.User{ID: "bruno", OrgID: "org_a", DisplayName: "Bruno Costa", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		link, err := (&accounts.Service{Store: st}).Issue(ctx, store.Credential{Kind: store.CredLoginLink, OrgID: "org_a", UserID: "bruno",
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		b.Do("open Bruno's link", chromedp.Navigate(b.srv.URL+"/login?token="+link), chromedp.WaitVisible(chromedp.CSS(`.login-card h1`)))
		b.WaitText(`.login-card h1`, "You are already signed in as someone else")
		if got := b.pageLook(); got != (look{Background: app.Background, Text: app.Text, Font: app.Font, CardBorder: "solid"}) {
			t.Errorf("the signed-in-as-other page looks like %+v, want the UI's", got)
		}
		b.fits(vp, "the signed-in-as-other page")
		b.Shot("login-other")
	})
}
