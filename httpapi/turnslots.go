package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// TurnLimits caps the turns this server runs at once: per user
// (organisation + user) and in all. Past either cap a message or an
// answer is refused with 429 and Retry-After before anything is read or
// written. The counts are this process's: behind a load balancer each
// replica counts its own, so a user may run PerUser turns on each
// replica, and the whole deployment PerServer on each.
type TurnLimits struct {
	// PerUser is how many turns one user may run at once; 0 means 4,
	// negative no cap.
	PerUser int
	// PerServer is how many turns the server runs at once; 0 means 256,
	// negative no cap.
	PerServer int
	// AdmitWait is how long a new turn's first writes wait for a busy
	// store before the message is refused with 503; 0 means
	// AdmitWriteWait.
	AdmitWait time.Duration
}

// Defaults of TurnLimits' zero values.
const (
	DefaultTurnsPerUser   = 4
	DefaultTurnsPerServer = 256
)

// TurnRetryAfter is the Retry-After of a turn refused at a cap: how long
// a turn still runs is not known, so a short wait.
const TurnRetryAfter = 5 * time.Second

// turnSlots counts the running turns against TurnLimits. Safe for
// concurrent use.
type turnSlots struct {
	perUser, perServer int

	mu    sync.Mutex
	users map[string]int // by userKey; only users with turns running
	total int
}

func newTurnSlots(l TurnLimits) *turnSlots {
	t := &turnSlots{perUser: l.PerUser, perServer: l.PerServer, users: map[string]int{}}
	if t.perUser == 0 {
		t.perUser = DefaultTurnsPerUser
	}
	if t.perServer == 0 {
		t.perServer = DefaultTurnsPerServer
	}
	return t
}

// take holds a slot for a turn of user (a userKey) and returns the
// function that frees it (once, whatever the number of calls), or a 429
// when either cap is reached.
func (t *turnSlots) take(user string) (release func(), err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.perUser > 0 && t.users[user] >= t.perUser:
		return nil, tooManyTurns("too_many_turns", fmt.Sprintf("you already have %d turns running, the most one person may run at once; try again when one has finished", t.perUser))
	case t.perServer > 0 && t.total >= t.perServer:
		return nil, tooManyTurns("server_busy", fmt.Sprintf("the server is running its limit of %d turns at once; try again in a few seconds", t.perServer))
	}
	t.users[user]++
	t.total++
	var once sync.Once
	return func() { once.Do(func() { t.free(user) }) }, nil
}

func (t *turnSlots) free(user string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.users[user]--; t.users[user] <= 0 {
		delete(t.users, user)
	}
	t.total--
}

// tooManyTurns is a 429 with Retry-After; a new error each time, since
// huma adds to an error's headers in place.
func tooManyTurns(code, msg string) error {
	secs := strconv.Itoa(int(TurnRetryAfter / time.Second))
	return huma.ErrorWithHeaders(apiErr(http.StatusTooManyRequests, code, msg), http.Header{"Retry-After": {secs}})
}
