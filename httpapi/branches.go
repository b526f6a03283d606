package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/store"
)

func (s *server) branchRoutes() {
	register(s, huma.Operation{
		OperationID: "switch-branch", Method: http.MethodPost, Path: "/api/conversations/{id}/branch", Tags: []string{"conversations"},
		Summary: "Show another branch of the conversation",
		Description: "A regenerated answer or an edited message (send-message with replaces) is a branch beside the " +
			"turn it replaces. This shows the branch through turn (one of the siblings GET .../messages lists): the " +
			"conversation's head becomes the latest turn of that branch (turn, or the newest turn after it, again and " +
			"again), the messages listing and the model's history follow it, and a new message continues it. Nothing " +
			"is deleted: what a replaced branch did (files written, memories saved) stays done. " +
			"400 no_such_turn for a turn that is not one of this conversation's; 409 turn_running while a turn runs; " +
			"404 for another user's or a missing conversation. Nothing changes on an error.",
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
	}, signedIn, s.switchBranch)
}

var (
	errNoSuchTurn      = apiErr(http.StatusBadRequest, "no_such_turn", "no such turn in this conversation")
	errTooManyBranches = apiErr(http.StatusConflict, "too_many_branches",
		"this message has the most versions a conversation keeps at one place; switch to one of them instead")
)

type switchBranchInput struct {
	ID   string `path:"id"`
	Body struct {
		Turn string `json:"turn" minLength:"1" maxLength:"100" doc:"A turn of the conversation (a sibling's turn_id from GET .../messages)."`
	}
}

type switchBranchOutput struct {
	Body struct {
		Head string `json:"head" doc:"The turn now last of the branch shown."`
	}
}

func (s *server) switchBranch(ctx context.Context, in *switchBranchInput) (*switchBranchOutput, error) {
	a := authFrom(ctx)
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	tree, err := s.st.TurnTree(ctx, a.OrgID, in.ID)
	if err != nil {
		return nil, err
	}
	if !tree.Has(in.Body.Turn) {
		return nil, errNoSuchTurn
	}
	head := tree.Leaf(in.Body.Turn)
	switch err := s.st.SetHead(ctx, a.OrgID, a.UserID, in.ID, head); {
	case errors.Is(err, store.ErrNotFound):
		return nil, notFound("no such conversation")
	case errors.Is(err, store.ErrNoSuchTurn):
		return nil, errNoSuchTurn
	case errors.Is(err, store.ErrTurnRunning):
		return nil, errTurnRunning
	case err != nil:
		return nil, err
	}
	out := &switchBranchOutput{}
	out.Body.Head = head
	return out, nil
}

// TurnBranch is where one turn of the branch shown stands among the
// turns beside it (the regenerated answers and edited messages of one
// place), for a pager (‹2/3›).
type TurnBranch struct {
	TurnID string `json:"turn_id"`
	// Index is the turn's place among Siblings, from 1.
	Index int `json:"index" doc:"The turn's place among siblings, from 1 (oldest first)."`
	Count int `json:"count" doc:"How many turns stand at this place, this one included (1 without branches)."`
	// Siblings are the turns at this place, oldest first, this one
	// included: what switch-branch takes.
	Siblings []string `json:"siblings" doc:"The turns at this place, oldest first, this one included: POST .../branch shows one."`
}

// branchesOf returns where each turn of tree's path stands among its
// siblings, in the path's order.
func branchesOf(tree store.TurnTree) []TurnBranch {
	kids, parent := map[string][]string{}, map[string]string{}
	for _, l := range tree.Turns {
		kids[l.ParentID] = append(kids[l.ParentID], l.ID)
		parent[l.ID] = l.ParentID
	}
	path := tree.Path()
	out := make([]TurnBranch, 0, len(path))
	for _, id := range path {
		sib := kids[parent[id]]
		b := TurnBranch{TurnID: id, Count: len(sib), Siblings: sib}
		for i, s := range sib {
			if s == id {
				b.Index = i + 1
			}
		}
		out = append(out, b)
	}
	return out
}
