package discovery

import (
	"strconv"
	"strings"
)

// SetTuning sets the ranking's tunables from "name=value,..." (tests only).
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
		f, _ := strconv.ParseFloat(v, 64)
		if p, ok := tunables[k]; ok {
			*p = f
		}
	}
}

var defaults map[string]float64
