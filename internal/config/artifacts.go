package config

import (
	"fmt"
	"time"
)

// BrowserOff is the artifacts.browser value that turns the visual checks
// off.
const BrowserOff = "off"

// Artifacts configures the artifact tools' visual checks
// (docs/artifacts.md): which headless Chromium renders HTML and SVG
// artifacts. The zero value looks for chromium on PATH, starts it on
// the first check, and renders two pages at a time.
type Artifacts struct {
	// Browser is the Chromium executable; "" looks for chromium,
	// chromium-browser and google-chrome on PATH, "off" turns the checks
	// off (visual artifacts are then saved unchecked and the check tools
	// left out).
	Browser string `yaml:"browser"`
	// ConcurrentPages bounds the pages rendered at once, across every
	// check; zero means 2, at most 8.
	ConcurrentPages int `yaml:"concurrent_pages"`
	// PageTimeout bounds one page's load, settle and capture; zero
	// means 15s, at most 60s.
	PageTimeout Duration `yaml:"page_timeout"`
}

func (a Artifacts) validate() error {
	if a.ConcurrentPages < 0 || a.ConcurrentPages > 8 {
		return fmt.Errorf("artifacts.concurrent_pages %d: use 0 to 8", a.ConcurrentPages)
	}
	if a.PageTimeout < 0 || a.PageTimeout.Std() > time.Minute {
		return fmt.Errorf("artifacts.page_timeout %v: use 0 to 60s", a.PageTimeout.Std())
	}
	return nil
}
