package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// TestEraseUser erases a member through the API: refused while a turn
// of theirs holds a run, for yourself and for a user of another
// organisation, each erasing nothing; then their credentials, records
// and workspace folder are gone while the others' stay.
func TestEraseUser(t *testing.T) {
	workspaces := t.TempDir()
	f := newFixture(t, func(c *httpapi.Config) { c.Workspaces = workspaces })
	f.conversation("org_a", "bob", "conv_bob")
	f.conversation("org_a", "carol", "conv_carol")
	f.memory("org_a", "bob", "mem_bob", "bob drinks coffee")
	files := map[string]string{}
	for _, p := range []string{"org_a/bob/notes/todo.md", "org_a/carol/kept.md", "org_b/bob/other.md"} {
		full := filepath.Join(workspaces, filepath.FromSlash(p))
		f.must(os.MkdirAll(filepath.Dir(full), 0o700))
		f.must(os.WriteFile(full, []byte(p), 0o600))
		files[p] = full
	}

	run := store.Run{OrgID: "org_a", ConversationID: "conv_bob", TurnID: "turn_run", UserID: "bob",
		Replica: "elsewhere", StartedAt: start, ExpiresAt: start.Add(time.Hour)}
	_, err := f.st.ClaimRun(f.ctx, run)
	f.must(err)
	wantError(t, f.do(f.alice, "POST", "/api/users/bob/erase", nil), http.StatusConflict, "turn_running")
	wantError(t, f.do(f.alice, "POST", "/api/users/alice/erase", nil), http.StatusBadRequest, "cannot_erase_self")
	wantError(t, f.do(f.alice, "POST", "/api/users/nobody/erase", nil), http.StatusNotFound, "not_found")
	f.ok(f.do(f.bob, "GET", "/api/me", nil), http.StatusOK, nil)
	if _, err := os.Stat(files["org_a/bob/notes/todo.md"]); err != nil {
		t.Fatalf("a refused erase removed the workspace: %v", err)
	}
	f.must(f.st.EndRun(f.ctx, "org_a", "conv_bob", "turn_run", start.Add(time.Minute)))

	f.ok(f.do(f.alice, "POST", "/api/users/bob/erase", nil), http.StatusNoContent, nil)
	wantError(t, f.do(f.bob, "GET", "/api/me", nil), http.StatusUnauthorized, "unauthorized")
	if _, err := f.st.GetUser(f.ctx, "org_a", "bob"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetUser of the erased user: %v, want not found", err)
	}
	if _, err := f.st.GetConversation(f.ctx, "org_a", "conv_bob"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the erased user's conversation: %v, want not found", err)
	}
	if _, err := f.st.GetMemory(f.ctx, "org_a", "bob", "mem_bob"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the erased user's memory: %v, want not found", err)
	}
	if _, err := os.Stat(filepath.Join(workspaces, "org_a", "bob")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the erased user's workspace: %v, want it removed", err)
	}
	for _, p := range []string{"org_a/carol/kept.md", "org_b/bob/other.md"} {
		if _, err := os.Stat(files[p]); err != nil {
			t.Errorf("%s after the erase: %v, want it kept", p, err)
		}
	}
	if _, err := f.st.GetConversation(f.ctx, "org_a", "conv_carol"); err != nil {
		t.Errorf("another user's conversation after the erase: %v", err)
	}
	var list struct{ Users []httpapi.User }
	f.ok(f.do(f.alice, "GET", "/api/users", nil), http.StatusOK, &list)
	for _, u := range list.Users {
		if u.ID == "bob" {
			t.Errorf("GET /api/users still lists the erased user: %+v", u)
		}
	}
	f.ok(f.do(f.carol, "GET", "/api/me", nil), http.StatusOK, nil)
	wantError(t, f.do(f.alice, "POST", "/api/users/bob/erase", nil), http.StatusNotFound, "not_found")
}

// eraseLastAdminStore answers every EraseUser as the store does for an
// organisation's last enabled admin (through the API alone that needs a
// race, as for disabling).
type eraseLastAdminStore struct{ httpapi.Repositories }

func (eraseLastAdminStore) EraseUser(context.Context, string, string) error {
	return fmt.Errorf("erase user: %w", store.ErrLastAdmin)
}

func TestEraseLastAdmin(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.Store = eraseLastAdminStore{c.Store} })
	wantError(t, f.do(f.alice, "POST", "/api/users/carol/erase", nil), http.StatusConflict, "last_admin")
}
