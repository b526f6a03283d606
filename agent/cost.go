package agent

import (
	"math"

	"github.com/quiverhq/quiver/llm"
)

// Price is a model's price per million tokens, in the configured currency
// (USD unless configured otherwise). Zero CachedInput or CacheWrite means
// the Input price.
type Price struct {
	Input       float64 `yaml:"input" json:"input"`
	CachedInput float64 `yaml:"cached_input" json:"cached_input"`
	CacheWrite  float64 `yaml:"cache_write" json:"cache_write"`
	Output      float64 `yaml:"output" json:"output"`
}

// CostMicros is what u costs at p, in millionths of the currency unit:
// tokens × price-per-million, rounded to the nearest micro-unit.
func (p Price) CostMicros(u llm.Usage) int64 {
	cached, write := p.CachedInput, p.CacheWrite
	if cached == 0 {
		cached = p.Input
	}
	if write == 0 {
		write = p.Input
	}
	plain := max(u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens, 0)
	c := float64(plain)*p.Input + float64(u.CachedInputTokens)*cached +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*p.Output
	return int64(math.Round(c))
}
