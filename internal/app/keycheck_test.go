package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestKeyringOtherKeyRefused: a command started with key a stores the
// keyring check; the same data folder opened with key b is refused by
// every command that opens the store — exit 1, the one message naming
// key ids only — before it writes anything: no server registered (nor
// contacted), no rotation, the check unchanged. Key a still opens it.
func TestKeyringOtherKeyRefused(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	withA := writeConfig(t, t.TempDir(), "network:\n  mode: self-hosted\nsecrets:\n  key_file: "+writeKeyFile(t, dir, "a.key", "a")+"\n")
	withB := writeConfig(t, t.TempDir(), "network:\n  mode: self-hosted\nsecrets:\n  key_file: "+writeKeyFile(t, dir, "b.key", "b")+"\n")
	if code, out, stderr := run(t, data, "mcp", "list", "--config", withA); code != 0 {
		t.Fatalf("mcp list with key a: exit %d: %s %s", code, out, stderr)
	}
	check := keyringCheck(t, data)
	if id, err := secret.SealedKeyID(check); err != nil || id != "a" {
		t.Fatalf("the first start stored the check %q (key %q, %v), want one under key a", check, id, err)
	}

	const refusal = `quiver: the configured keys (b) cannot open this database's secrets (sealed under key a); every replica and command needs the same keyring (secrets.key_file or secrets.keys_env, see docs/postgres.md, "Secrets with several replicas"); refusing to start` + "\n"
	peer := startMCPPeer(t)
	for _, args := range [][]string{
		{"mcp", "list"},
		{"mcp", "add", "peer", peer.URL, "--token-stdin"},
		{"secrets", "rotate"},
	} {
		code, out, stderr := runEnv(t, data, nil, "token-under-b\n", append(args, "--config", withB)...)
		if code != 1 || out != "" || stderr != refusal {
			t.Errorf("%s with key b: exit %d, stdout %q, stderr %q; want 1 and\n%s", strings.Join(args, " "), code, out, stderr, refusal)
		}
	}
	if n := peer.hits.Load(); n != 0 {
		t.Errorf("a refused mcp add contacted the server %d times", n)
	}
	if got := keyringCheck(t, data); got != check {
		t.Errorf("the check changed from %q to %q", check, got)
	}
	if code, out, stderr := run(t, data, "mcp", "list", "--config", withA, "--json"); code != 0 || strings.Contains(out, "peer") {
		t.Errorf("mcp list with key a afterwards: exit %d, stdout %q, stderr %q; want 0 and no server", code, out, stderr)
	}
}

// keyringCheck reads the data folder's stored keyring check.
func keyringCheck(t *testing.T, data string) string {
	t.Helper()
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	check, err := st.KeyCheck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return check
}
