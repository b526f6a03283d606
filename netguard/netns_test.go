package netguard

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const netnsEnv = "NETGUARD_IN_EMPTY_NETNS"

// TestBlockedInEmptyNetns re-runs the battery with the real dialer inside a
// fresh network namespace (`unshare -rn`) where only loopback exists. Had
// any refusal come after a dial, the error would be a network error rather
// than ErrBlocked. Skipped where unprivileged namespaces are not allowed.
func TestBlockedInEmptyNetns(t *testing.T) {
	if os.Getenv(netnsEnv) != "" {
		t.Skip("already inside the namespace")
	}
	if testing.Short() {
		t.Skip("short mode")
	}
	if err := exec.Command("unshare", "-rn", "true").Run(); err != nil {
		t.Skipf("unshare -rn not permitted here: %v", err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "unshare", "-rn", "sh", "-c",
		`ip link set lo up 2>/dev/null; exec "$0" -test.run '^TestInEmptyNetns$' -test.v`, bin)
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper in namespace failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestInEmptyNetns is the helper body; it runs only inside the namespace.
func TestInEmptyNetns(t *testing.T) {
	if os.Getenv(netnsEnv) == "" {
		t.Skip("helper for TestBlockedInEmptyNetns")
	}
	res := newStub(publicAnswers)
	for name, ips := range ssrfNames {
		res.add(name, ips...)
	}
	c := New(Config{Resolver: res})
	for _, tc := range blockedURLs {
		if err := doErrNoReq(t, c, tc.url); err != nil && !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: %q: %v, want ErrBlocked", tc.name, tc.url, err)
		}
	}
	// Control: the namespace really has no route out, so an allowed
	// address fails with a network error, not ErrBlocked. Only attempted
	// when loopback is the sole interface, so nothing can leave.
	if !onlyLoopback(t) {
		t.Fatal("namespace has interfaces besides lo")
	}
	if err := doErrNoReq(t, c, "http://8.8.8.8/"); err == nil || errors.Is(err, ErrBlocked) {
		t.Errorf("public address in empty namespace: %v, want a network error", err)
	}
}

// doErrNoReq is doErr, except that a URL net/http cannot turn into a request
// counts as refused (nil).
func doErrNoReq(t *testing.T, c *Client, raw string) error {
	if _, err := newGet(t, raw); err != nil {
		return nil
	}
	err := doErr(t, c, raw)
	if err == nil {
		return errors.New("request succeeded")
	}
	return err
}

// onlyLoopback reads /proc/net/dev, which (unlike /sys/class/net without
// a fresh sysfs) lists the interfaces of the current network namespace.
func onlyLoopback(t *testing.T) bool {
	data, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		t.Logf("read /proc/net/dev: %v", err)
		return false
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n")[2:] {
		if name, _, ok := strings.Cut(line, ":"); ok {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return slices.Equal(names, []string{"lo"})
}
