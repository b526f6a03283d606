package browsertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// EnvTestTools names the folder scripts/webui-testtools installed the web
// UI's test tools into (axe-core); scripts/test sets it.
const EnvTestTools = "QUIVER_WEBUI_TESTTOOLS"

var axeSource = sync.OnceValues(func() (string, error) {
	dir := os.Getenv(EnvTestTools)
	if dir == "" {
		// Run directly (go test): install or find the pinned copy.
		root, err := moduleRoot()
		if err != nil {
			return "", err
		}
		out, err := exec.Command(filepath.Join(root, "scripts", "webui-testtools")).Output()
		if err != nil {
			msg := err.Error()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				msg += ": " + strings.TrimSpace(string(ee.Stderr))
			}
			return "", fmt.Errorf("scripts/webui-testtools: %s", msg)
		}
		dir = strings.TrimSpace(string(out))
	}
	src, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		return "", fmt.Errorf("axe-core not installed in %s=%q (run scripts/webui-testtools): %w", EnvTestTools, dir, err)
	}
	return string(src), nil
})

// moduleRoot is the folder of the go.mod above the working directory (a
// test runs in its package's folder).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("find the module root: no go.mod above the working directory")
		}
		dir = up
	}
}

// RequireAxe makes sure axe-core can be injected (Axe), or skips t (fails
// it when QUIVER_REQUIRE_PEERS=1) when it cannot be installed.
func RequireAxe(t testing.TB) {
	t.Helper()
	if err := axeMissing(t); err != nil {
		t.Skip(err)
	}
}

// HaveAxe says whether axe-core can be injected (Axe), for a test that
// checks accessibility beside other things: when it cannot be installed
// it logs why and returns false (fails t when QUIVER_REQUIRE_PEERS=1).
func HaveAxe(t testing.TB) bool {
	t.Helper()
	if err := axeMissing(t); err != nil {
		t.Logf("accessibility not checked: %v", err)
		return false
	}
	return true
}

// axeMissing is why axe-core cannot be injected, nil when it can; it
// fails t when QUIVER_REQUIRE_PEERS=1.
func axeMissing(t testing.TB) error {
	t.Helper()
	_, err := axeSource()
	if err != nil && os.Getenv("QUIVER_REQUIRE_PEERS") == "1" {
		t.Fatal(err)
	}
	return err
}

// AxeViolation is one rule a page breaks, as axe reports it: the
// selectors of the elements that break it, and how to fix the first.
type AxeViolation struct {
	ID, Impact, Help, HelpURL, Fix string
	Targets                        []string
}

// String is the violation as a test failure shows it: rule, impact,
// help, the elements' selectors and the first one's fix.
func (v AxeViolation) String() string {
	return fmt.Sprintf("%s (%s): %s (%s)\n  %s\n  first: %s", v.ID, v.Impact, v.Help, v.HelpURL, strings.Join(v.Targets, "\n  "), v.Fix)
}

// axeRun runs every axe rule on the document and returns the serious and
// critical violations (the minor and moderate ones are not reported).
const axeRun = `(async () => {
	const r = await axe.run(document, { resultTypes: ['violations'] });
	return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v => ({
		ID: v.id, Impact: v.impact, Help: v.help, HelpURL: v.helpUrl,
		Fix: (v.nodes[0]?.failureSummary ?? '').replace(/\s+/g, ' '),
		Targets: v.nodes.map(n => n.target.join(' ')),
	}));
})()`

// Axe runs axe-core on the page as it shows now and returns its serious
// and critical violations. axe-core is evaluated in the page through the
// DevTools protocol (Runtime.evaluate, which the page's
// Content-Security-Policy does not govern) when the page has none yet.
// Call RequireAxe first.
func (b *Browser) Axe() []AxeViolation {
	b.t.Helper()
	src, err := axeSource()
	if err != nil {
		b.t.Fatal(err)
	}
	if !Eval[bool](b, `typeof window.axe === 'object'`) {
		b.Do("inject axe-core", chromedp.Evaluate[chromedp.Void](src))
	}
	return Eval[[]AxeViolation](b, axeRun, chromedp.EvalAwaitPromise)
}
