package discordtest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// Many writers at once, REST and injected, with a live gateway: every
// message is stored once and dispatched once.
func TestConcurrentUse(t *testing.T) {
	f := newFixture(t, nil)
	f.open(t)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := f.dg.ChannelMessageSend(f.text.ID, fmt.Sprintf("bot %d", i)); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			f.srv.SendMessage(f.text.ID, f.alice.User.ID, fmt.Sprintf("alice %d", i))
			_ = f.srv.Messages(f.text.ID)
			_ = f.srv.Connections()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	seen := map[string]bool{}
	for len(seen) < 2*n {
		m := recv(t, f.messages, "MESSAGE_CREATE")
		if seen[m.ID] {
			t.Fatalf("message %s dispatched twice", m.ID)
		}
		seen[m.ID] = true
	}
	if got := len(f.srv.Messages(f.text.ID)); got != 2*n {
		t.Errorf("%d messages stored, want %d", got, 2*n)
	}
}

// Replicas of a surface each open a session; the count the surface's
// tests assert on follows opens and closes.
func TestConnectionsCountsSessions(t *testing.T) {
	f := newFixture(t, nil)
	f.open(t)
	second := f.srv.NewSession(t)
	second.Identify.Intents = f.dg.Identify.Intents
	if err := second.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := f.srv.WaitConnections(ctx, 2); err != nil {
		t.Fatalf("two sessions: %v (have %d)", err, f.srv.Connections())
	}
	closeSession(t, f.srv, second)
	if err := f.srv.WaitConnections(ctx, 1); err != nil {
		t.Fatalf("after one closed: %v (have %d)", err, f.srv.Connections())
	}
}

func TestUnknownRouteAndVersion(t *testing.T) {
	srv := Start(t)
	for _, path := range []string{"/api/v10/nothing/here", "/api/v8/users/@me", "/elsewhere"} {
		req, _ := http.NewRequest("GET", srv.URL()+path, nil)
		req.Header.Set("Authorization", srv.AuthToken())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", srv.URL()+"/api/v10/users/@me", nil)
	req.Header.Set("Authorization", srv.AuthToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /api/v10/users/@me: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
