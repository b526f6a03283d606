package discovery

import (
	"strconv"
	"strings"
)

// tunables are the ranking's variables tune_test.go sets.
var tunables = map[string]*float64{"alias": &aliasWeight, "split": &aliasSplit}

var defaults map[string]float64

// SetTuning sets the ranking's variables from "name=value,..." (names
// of tunables), the others to their defaults. Tests only.
func SetTuning(cfg string) {
	if defaults == nil {
		defaults = map[string]float64{}
		for k, p := range tunables {
			defaults[k] = *p
		}
	}
	for k, p := range tunables {
		*p = defaults[k]
	}
	for _, kv := range strings.Split(cfg, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && tunables[k] != nil {
			*tunables[k] = f
		}
	}
}

// DropCache empties the index's cache of words' hits (benchmarks).
func (ix *Index) DropCache() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	clear(ix.cache)
}
