package httpapi

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/store"
)

// runningTurns are the console runs this server holds for users,
// cancellable, each under a key of its own (disabling a user cancels
// every one of theirs), and the watches of the conversation keys whose
// turns (held in the runs registry) end. Conversation turns themselves
// are the runs registry's, across replicas.
type runningTurns struct {
	mu sync.Mutex
	m  map[string]*runningTurn
	// watched counts, per key, the requests that collected a turn's facts
	// and have not registered their run yet, and ends how many runs under
	// the key ended meanwhile (kept only while watched, so bounded by the
	// requests in flight).
	watched map[string]*watch
}

// watch is one key's watchers and the runs ended under it meanwhile.
type watch struct{ watchers, ends int }

type runningTurn struct {
	cancel context.CancelCauseFunc
	// user is the userKey of the run's caller.
	user string
}

func newRunningTurns() *runningTurns {
	return &runningTurns{m: map[string]*runningTurn{}, watched: map[string]*watch{}}
}

// watch starts watching key for runs that end, and returns the count of
// those ended so far and the function that stops watching. A request
// calls it before it collects a turn's facts: when a run under the key
// ended between then and its own run's registration, what it collected
// is stale (see startTurn).
func (t *runningTurns) watch(key string) (ends func() int, stop func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.watched[key]
	if w == nil {
		w = &watch{}
		t.watched[key] = w
	}
	w.watchers++
	start := w.ends
	ends = func() int {
		t.mu.Lock()
		defer t.mu.Unlock()
		return w.ends - start
	}
	stop = func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if w.watchers--; w.watchers == 0 {
			delete(t.watched, key)
		}
	}
	return ends, stop
}

func turnKey(orgID, conversationID string) string { return orgID + "\x00" + conversationID }

func userKey(orgID, userID string) string { return orgID + "\x00" + userID }

// consoleKey is a new console run's key: unique, and never a turnKey (an
// organisation ID is never empty), so a console run blocks no
// conversation and no other console run.
func (s *server) consoleKey() string { return "\x00console\x00" + s.ids.New("run_") }

// start registers a run of user; false when one already runs under key.
func (t *runningTurns) start(key, user string, cancel context.CancelCauseFunc) (*runningTurn, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[key] != nil {
		return nil, false
	}
	rt := &runningTurn{cancel: cancel, user: user}
	t.m[key] = rt
	return rt, true
}

// cancelUser cancels every run the user holds.
func (t *runningTurns) cancelUser(user string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rt := range t.m {
		if rt.user == user {
			rt.cancel(errCancelRequested)
		}
	}
}

// done forgets rt, if it is still the run under key.
func (t *runningTurns) done(key string, rt *runningTurn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[key] == rt {
		delete(t.m, key)
		t.ended(key)
	}
}

// ended counts a run that ended under key for the requests watching it;
// t.mu is held.
func (t *runningTurns) ended(key string) {
	if w := t.watched[key]; w != nil {
		w.ends++
	}
}

// noteEnd tells the requests watching key that a turn of this server
// ended under it (the turns registry holds the run itself).
func (t *runningTurns) noteEnd(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended(key)
}

// trackRun registers a run of a's under key and returns its context,
// cancelled with errCancelRequested when the run is cancelled, and the
// function that ends it (call it once the run is over). It fails with
// errTurnRunning when a run holds key, and with errDisabled's 401 when a
// was disabled after the request authenticated.
//
// The user is re-read after registering because disabling commits, then
// cancels the user's registered runs: a disable that committed before
// the registration cancelled nothing of this run, so the re-read sees it
// and refuses; one that commits after the re-read finds the run
// registered and cancels it.
func (s *server) trackRun(ctx context.Context, a *auth, key string) (context.Context, func(), error) {
	runCtx, cancel := context.WithCancelCause(ctx)
	rt, ok := s.turns.start(key, userKey(a.OrgID, a.UserID), cancel)
	if !ok {
		cancel(nil)
		return nil, nil, errTurnRunning
	}
	end := func() {
		cancel(nil)
		s.turns.done(key, rt)
	}
	u, err := s.st.GetUser(ctx, a.OrgID, a.UserID)
	if errors.Is(err, store.ErrNotFound) || err == nil && !u.DisabledAt.IsZero() {
		err = errDisabled()
	}
	if err != nil {
		end()
		return nil, nil, err
	}
	return runCtx, end, nil
}

// errDisabled answers a request whose user was disabled while it was on
// its way, as authentication answers the next one. A new error each
// time: huma adds to an error's headers in place.
func errDisabled() error {
	return huma.ErrorWithHeaders(
		apiErr(http.StatusUnauthorized, "unauthorized", "this user has been disabled; ask an admin"),
		http.Header{"WWW-Authenticate": {`Bearer realm="quiver"`}})
}
