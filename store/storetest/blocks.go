package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// blockCases checks the Blocks repository.
func blockCases() []suiteCase {
	return []suiteCase{
		{"BlockUnblock", testBlockUnblock},
		{"Invalid", testBlockInvalid},
		{"ConcurrentCap", testBlockConcurrentCap},
	}
}

func (f *fixture) newBlock(agent, user string) store.Block {
	return store.Block{OrgID: f.id("org"), Agent: agent, UserID: user, Reason: "kept posting spam", By: "agent", CreatedAt: at(1)}
}

func testBlockUnblock(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.id("org")
	for _, b := range []store.Block{f.newBlock("tomori", "bred"), f.newBlock("tomori", "ana"), f.newBlock("other", "bred")} {
		if err := f.BlockUser(ctx, b); err != nil {
			t.Fatalf("BlockUser: %v", err)
		}
	}
	again := f.newBlock("tomori", "bred")
	again.Reason = "asked to be left alone"
	if err := f.BlockUser(ctx, again); err != nil {
		t.Fatalf("BlockUser again: %v", err)
	}
	list, err := f.ListBlocks(ctx, org, "tomori")
	if err != nil || len(list) != 2 {
		t.Fatalf("ListBlocks: %+v, %v", list, err)
	}
	for _, b := range list {
		wantUTC(t, "block", b.CreatedAt)
		if b.UserID == "bred" && b.Reason != "asked to be left alone" {
			t.Errorf("a second block kept the reason %q", b.Reason)
		}
	}
	for _, tc := range []struct {
		agent, user string
		want        bool
	}{{"tomori", "bred", true}, {"tomori", "chi", false}, {"other", "ana", false}} {
		if got, err := f.UserBlocked(ctx, org, tc.agent, tc.user); err != nil || got != tc.want {
			t.Errorf("UserBlocked(%s, %s) = %v, %v; want %v (persona scoped)", tc.agent, tc.user, got, err, tc.want)
		}
	}
	if got, _ := f.UserBlocked(ctx, f.id("other-org"), "tomori", "bred"); got {
		t.Error("another organisation sees the block")
	}
	if err := f.UnblockUser(ctx, org, "tomori", "bred"); err != nil {
		t.Fatal(err)
	}
	if err := f.UnblockUser(ctx, org, "tomori", "nobody"); err != nil {
		t.Errorf("unblocking someone not blocked: %v", err)
	}
	if got, _ := f.UserBlocked(ctx, org, "tomori", "bred"); got {
		t.Error("still blocked after unblocking")
	}
	if got, _ := f.UserBlocked(ctx, org, "other", "bred"); !got {
		t.Error("unblocking for one agent unblocked for another")
	}
}

func testBlockInvalid(t *testing.T, f *fixture) {
	long := f.newBlock("tomori", "bred")
	long.Reason = strings.Repeat("x", store.MaxBlockReasonRunes+1)
	noUser := f.newBlock("tomori", "")
	for _, b := range []store.Block{long, noUser} {
		if err := f.BlockUser(t.Context(), b); !errors.Is(err, store.ErrBlockInvalid) {
			t.Errorf("BlockUser(%+v): %v, want ErrBlockInvalid", b.UserID, err)
		}
	}
	if list, _ := f.ListBlocks(t.Context(), f.id("org"), "tomori"); len(list) != 0 {
		t.Errorf("refused blocks were stored: %d", len(list))
	}
}

func testBlockConcurrentCap(t *testing.T, f *fixture) {
	ctx := t.Context()
	for i := range store.MaxBlocksPerAgent - 4 {
		if err := f.BlockUser(ctx, f.newBlock("tomori", fmt.Sprintf("u%04d", i))); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() { errs[i] = f.BlockUser(ctx, f.newBlock("tomori", fmt.Sprintf("late%d", i))) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, store.ErrBlockQuota) {
			t.Errorf("concurrent block: %v", err)
		}
	}
	list, _ := f.ListBlocks(ctx, f.id("org"), "tomori")
	if ok != 4 || len(list) != store.MaxBlocksPerAgent {
		t.Errorf("%d concurrent blocks passed and %d are stored, want 4 and %d", ok, len(list), store.MaxBlocksPerAgent)
	}
}
