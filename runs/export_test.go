package runs

import "time"

// HoldText makes r gather text and batch events for d, past what Check
// allows, so that a test sees what only a non-text event or End stores.
func HoldText(r *Registry, d time.Duration) { r.cfg.TextFlush = d }
