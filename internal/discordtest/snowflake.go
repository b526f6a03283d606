package discordtest

import (
	"fmt"
	"strconv"
	"sync"
	"time"
)

// discordEpoch is the first millisecond of 2015 (UTC), the zero of a
// snowflake's timestamp (Discord's reference documentation, snowflakes).
const discordEpoch = 1420070400000

// ParseSnowflake parses a snowflake id as it travels on the wire: a plain
// unsigned decimal string of at most 20 digits that fits in 64 bits.
func ParseSnowflake(s string) (uint64, error) {
	v, err := parseDecimal(s)
	if err != nil {
		return 0, fmt.Errorf("parse snowflake %q: %w", s, err)
	}
	return v, nil
}

// SnowflakeTime is the creation time encoded in a snowflake's top 42 bits.
func SnowflakeTime(id uint64) time.Time {
	return time.UnixMilli(int64(id>>22) + discordEpoch).UTC()
}

// snowflakes hands out strictly increasing ids whose timestamps follow
// the clock, so ids sort by creation as Discord's do.
type snowflakes struct {
	mu   sync.Mutex
	now  func() time.Time
	last uint64
}

func (g *snowflakes) next() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ms := g.now().UnixMilli() - discordEpoch
	if ms < 0 {
		ms = 0
	}
	id := uint64(ms) << 22
	if id <= g.last {
		id = g.last + 1
	}
	g.last = id
	return strconv.FormatUint(id, 10)
}

// snowflakeLess orders two wire ids numerically; an id that does not
// parse sorts first, which only setup code can produce.
func snowflakeLess(a, b string) bool {
	x, errA := ParseSnowflake(a)
	y, errB := ParseSnowflake(b)
	if errA != nil || errB != nil {
		return errA != nil && errB == nil
	}
	return x < y
}
