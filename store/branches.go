package store

import (
	"context"
	"errors"
)

// A conversation's turns form a tree: each turn follows its parent turn
// (Turn.ParentID; none for a first message), and a regenerated answer or
// an edited message is a new turn beside the one it replaces, with the
// same parent. The conversation's head is the last turn of the branch
// shown: what the model sees of the conversation is the path from the
// root to the head, and a new message follows the head.

// MaxSiblings bounds the turns that follow one parent (the branches a
// person can page through at one place of a conversation): a write of a
// turn past it is refused with ErrTooManyBranches.
const MaxSiblings = 50

var (
	// ErrTooManyBranches refuses a turn whose parent already has
	// MaxSiblings turns following it: nothing is written.
	ErrTooManyBranches = errors.New("too many branches at this place of the conversation")
	// ErrNoSuchTurn refuses a turn named as a parent or a head that is no
	// turn of the conversation (in its organisation): nothing is written.
	ErrNoSuchTurn = errors.New("no such turn in this conversation")
)

// TurnLink is one turn of a conversation's tree.
type TurnLink struct {
	ID string
	// ParentID is the turn it follows; "" for a first message.
	ParentID string
}

// TurnTree is a conversation's turns that hold messages, in the order
// they were first written (their first message's Seq), and its head.
type TurnTree struct {
	// Head is the last turn of the branch shown; "" when the conversation
	// has no turn, or none recorded as its head (then the last turn is).
	Head  string
	Turns []TurnLink
}

// Branches reads and moves a conversation's branches.
type Branches interface {
	// TurnTree returns the tree of the conversation with that ID in that
	// organisation: empty (no error) when it has no turn or does not
	// exist there.
	TurnTree(ctx context.Context, orgID, conversationID string) (TurnTree, error)
	// SetHead makes turnID the head of the conversation when userID owns
	// it and turnID is one of its turns holding messages. A conversation
	// that does not exist in orgID and one of another user are both
	// ErrNotFound; a turn of no such place, ErrNoSuchTurn; one with a Run
	// is ErrTurnRunning. Either way nothing is written.
	SetHead(ctx context.Context, orgID, userID, conversationID, turnID string) error
}

// HeadTurn is the last turn of the branch shown: Head, or, when none is
// recorded, the last turn; "" when the tree has no turn.
func (t TurnTree) HeadTurn() string {
	if t.Head != "" {
		return t.Head
	}
	if n := len(t.Turns); n > 0 {
		return t.Turns[n-1].ID
	}
	return ""
}

// Has reports whether id is a turn of the tree.
func (t TurnTree) Has(id string) bool {
	for _, l := range t.Turns {
		if l.ID == id {
			return true
		}
	}
	return false
}

// Parent returns the parent of turn id, "" for a first message or a turn
// not in the tree.
func (t TurnTree) Parent(id string) string {
	for _, l := range t.Turns {
		if l.ID == id {
			return l.ParentID
		}
	}
	return ""
}

// Path returns the turns from the root to the head (HeadTurn), in order;
// nil for a tree without turns. A parent that is not in the tree ends
// the path there, and so does a cycle (which no store writes).
func (t TurnTree) Path() []string { return t.PathTo(t.HeadTurn()) }

// PathTo returns the turns from the root to head, in order; nil when
// head is "" or no turn of the tree.
func (t TurnTree) PathTo(head string) []string {
	parent := make(map[string]string, len(t.Turns))
	for _, l := range t.Turns {
		parent[l.ID] = l.ParentID
	}
	var path []string
	seen := map[string]bool{}
	for id := head; id != "" && !seen[id]; id = parent[id] {
		if _, ok := parent[id]; !ok {
			break
		}
		seen[id] = true
		path = append(path, id)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// Siblings returns the turns that follow parent ("" for first
// messages), in the order they were written.
func (t TurnTree) Siblings(parent string) []string {
	var out []string
	for _, l := range t.Turns {
		if l.ParentID == parent {
			out = append(out, l.ID)
		}
	}
	return out
}

// Leaf returns the last turn of the branch that goes through id: from
// id, the latest turn that follows it, again and again. It is id itself
// when nothing follows it.
func (t TurnTree) Leaf(id string) string {
	seen := map[string]bool{}
	for !seen[id] {
		seen[id] = true
		kids := t.Siblings(id)
		if len(kids) == 0 {
			return id
		}
		id = kids[len(kids)-1]
	}
	return id
}

// OnPath returns the messages of msgs on the tree's path (Path): those
// of its turns and those of no turn. A tree without turns keeps every
// message. msgs itself is not modified.
func (t TurnTree) OnPath(msgs []Message) []Message {
	if len(t.Turns) == 0 {
		return msgs
	}
	return t.OnPathTo(msgs, t.HeadTurn())
}

// OnPathTo returns the messages of msgs on the path from the root to
// head (PathTo), and those of no turn: what a turn following head sees.
// msgs itself is not modified.
func (t TurnTree) OnPathTo(msgs []Message, head string) []Message {
	path := t.PathTo(head)
	on := make(map[string]bool, len(path))
	for _, id := range path {
		on[id] = true
	}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if m.TurnID == "" || on[m.TurnID] {
			out = append(out, m)
		}
	}
	return out
}
