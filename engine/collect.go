package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// Request is what a surface knows when a turn starts: who asks, where,
// with which agent, and the message.
type Request struct {
	// Caller is the person asking; UserID is required. Timezone must be
	// a valid zone name or empty (surfaces validate it).
	Caller turn.Caller
	// OrgID is the caller's organisation.
	OrgID string
	// ConversationID names the conversation; "" is a turn with no
	// conversation (nothing read; with Create, nothing written).
	ConversationID string
	// ChannelID and CommunityID locate the conversation on surfaces that
	// have them.
	ChannelID, CommunityID string
	// Surface names the surface the conversation happens on (package
	// surface's names); "" is Quiver's own conversations (web chat, API,
	// CLI).
	Surface string
	// Agent is the agent when the surface has one (an agent file). Nil
	// takes a stored agent through Config.Agents: the stored
	// conversation's, else AgentName's.
	Agent *Agent
	// AgentName names a stored agent for requests without a stored
	// conversation (the tool console, a conversation's first message); a
	// stored conversation keeps its own.
	AgentName string
	// Model serves the turn; nil opens the agent's through the
	// runtime's Models. Its reference becomes the facts' provider and name.
	Model llm.Model
	// Message is the user's message (or the answer to a paused turn). A
	// turn that runs (not DryRun) refuses one that is empty once trimmed.
	Message string
	// ModelRef, for a conversation not stored yet (its first message),
	// is the model of the agent's to run on (Agent.Offers), which the
	// surface stores with the conversation; "" runs on the agent's own.
	// A stored conversation runs on the model it chose (store.
	// Conversation.Model) while its agent still offers it, else on the
	// agent's own, and ModelRef is ignored.
	ModelRef string
	// UserMode overrides Deliberate Tool Mode's stored user mode ("on",
	// "off"); "" uses the stored one.
	UserMode string
	// DryRun prepares without writing anything (the inspector,
	// quiver turn): a missing model is no error, and the targets
	// Deliberate Tool Mode opens are not recorded.
	DryRun bool
	// Create makes the conversation the caller's when no one holds it
	// yet (the CLI). Without it the conversation must exist and be the
	// caller's (the HTTP API), else ErrNoConversation.
	Create bool
	// Payer is who is billed; "" bills the organisation.
	Payer string
	// Deliberate, when set, is Deliberate Tool Mode's settings for this
	// turn in place of the stored ones, with no custom triggers (quiver
	// turn --dtm).
	Deliberate *intent.Settings
	// TurnID names the turn; "" takes a fresh id (Config.NewID). A turn
	// answering a paused one keeps that turn's id.
	TurnID string
	// Scheduled, when set, makes the turn the run of a scheduled task: it
	// answers no paused turn, Deliberate Tool Mode does not gate it (the
	// task's tools were chosen when it was scheduled), and its toolset
	// keeps only the task's tools (Scheduled.Tools) that selection still
	// allows, without schedule_task.
	Scheduled *turn.Scheduled
	// Replaces, when set, names a turn of the conversation that the new
	// turn goes beside (a regenerated answer, an edited message): it
	// follows the same parent and sees the history up to it, never
	// answers a paused turn, and becomes the head. A turn of no branch of
	// the conversation is refused (*InputError); "" follows the head.
	// Needs Repositories.Branches.
	Replaces string
}

// Collected is everything a turn reads before it selects: the facts and
// the conversation's state at the turn's start. It is built once by
// collect and never changed after.
type Collected struct {
	req     Request
	facts   turn.Facts
	conv    store.Conversation
	history []store.Message
	// lastSeq is the Seq of the conversation's last message when read,
	// on the branch shown or not.
	lastSeq int64
	// tree is the conversation's turns (Repositories.Branches), parent
	// the turn the new one follows, and branched whether the turn is
	// recorded on the tree.
	tree     store.TurnTree
	parent   string
	branched bool
	paused   *store.Turn
	runtime  Runtime
	model    llm.Model
	dtm      intent.Settings
	custom   *intent.Custom
}

// Facts returns the turn's facts.
func (c *Collected) Facts() turn.Facts { return c.facts }

// Request returns the request the turn was collected from, as given.
func (c *Collected) Request() Request { return c.req }

// Conversation returns the conversation as read at the turn's start;
// zero when the turn has none or it did not exist yet.
func (c *Collected) Conversation() store.Conversation { return c.conv }

// LastSeq returns the Seq of the last message the turn's facts were
// read with, 0 when the conversation had none: store.Messages'
// LastMessageSeq still giving it means nothing was appended since.
func (c *Collected) LastSeq() int64 { return c.lastSeq }

// Parent returns the turn the new turn follows ("" for a first message),
// and whether the turn is recorded on the conversation's tree (false
// without Repositories.Branches).
func (c *Collected) Parent() (string, bool) { return c.parent, c.branched }

// Paused returns the conversation's paused turn, which this turn answers;
// nil when its last turn is not paused.
func (c *Collected) Paused() *store.Turn { return c.paused }

// collect reads, once each, the conversation, its messages and paused
// turn, the agent, the organisation's runtime, Deliberate Tool Mode's
// settings and the model, and builds the turn's facts from them.
func (e *Engine) collect(ctx context.Context, r Request) (*Collected, error) {
	if r.Caller.UserID == "" || r.OrgID == "" {
		return nil, errors.New("engine: a request needs its caller's user and organisation")
	}
	if !r.DryRun && strings.TrimSpace(r.Message) == "" {
		return nil, inputf("the message is empty: write something to send")
	}
	c := &Collected{req: r}
	if err := e.readConversation(ctx, r, c); err != nil {
		return nil, err
	}
	ag, err := e.agent(ctx, r, c.conv)
	if err != nil {
		return nil, err
	}
	if ag, err = chosenModel(r, c.conv, ag); err != nil {
		return nil, err
	}
	if c.runtime, err = e.cfg.Runtime.Runtime(ctx, r.OrgID); err != nil {
		return nil, err
	}
	if c.model, err = e.model(ctx, r, c.runtime, ag.Model); err != nil {
		return nil, err
	}
	c.facts = e.facts(r, ag, c)
	if err := e.attached(ctx, &c.facts); err != nil {
		return nil, err
	}
	if err := e.budget(ctx, r, &c.facts); err != nil {
		return nil, err
	}
	if c.paused == nil && r.Scheduled == nil {
		if c.dtm, c.custom, err = e.deliberateSettings(ctx, r, c.facts.Agent.Deliberate); err != nil {
			return nil, err
		}
		c.facts.Deliberate = c.dtm.Active() && e.cfg.Detector != nil
	}
	return c, nil
}

// readConversation reads the conversation (ownership), its messages and
// its paused turn.
func (e *Engine) readConversation(ctx context.Context, r Request, c *Collected) error {
	repos := e.cfg.Repos
	switch {
	case r.ConversationID == "":
		return nil
	case repos.Conversations == nil || repos.Messages == nil || repos.Turns == nil:
		// Fail closed: a conversation whose owner cannot be checked is
		// not read, and no turn is built in it.
		return errors.New("engine: a turn in a conversation needs the Conversations, Messages and Turns repositories")
	}
	conv, found, err := ownConversation(ctx, repos.Conversations, r.OrgID, r.Caller.UserID, r.ConversationID)
	switch {
	case err != nil:
		return err
	case !found && !r.Create:
		return ErrNoConversation
	case !found:
		c.history = []store.Message{}
		return nil
	}
	c.conv = conv
	if c.history, err = repos.Messages.ListMessages(ctx, r.OrgID, r.ConversationID, 0); err != nil {
		return fmt.Errorf("read conversation: %w", err)
	}
	if n := len(c.history); n > 0 {
		c.lastSeq = c.history[n-1].Seq
	}
	if err := e.readBranch(ctx, r, c); err != nil {
		return err
	}
	if c.history == nil {
		c.history = []store.Message{}
	}
	if r.Replaces != "" || r.Scheduled != nil {
		return nil // a new turn beside one, or a task's run: it answers no pause
	}
	c.paused, err = store.PausedTurn(ctx, repos.Turns, r.OrgID, c.history)
	return err
}

// readBranch reads the conversation's tree, and keeps of c.history the
// branch the turn follows: the head's, or with Replaces the one up to
// that turn's parent. A Replaces of no turn of the conversation, and a
// place that has store.MaxSiblings turns already, are refused.
func (e *Engine) readBranch(ctx context.Context, r Request, c *Collected) error {
	b := e.cfg.Repos.Branches
	switch {
	case b == nil && r.Replaces != "":
		return errors.New("engine: a turn beside another needs the Branches repository")
	case b == nil:
		return nil
	}
	tree, err := b.TurnTree(ctx, r.OrgID, r.ConversationID)
	if err != nil {
		return fmt.Errorf("read conversation: %w", err)
	}
	c.tree, c.branched, c.parent = tree, true, tree.HeadTurn()
	if r.Replaces == "" {
		c.history = tree.OnPath(c.history)
		return nil
	}
	if !tree.Has(r.Replaces) {
		return inputf("no turn %q in this conversation to regenerate or edit", r.Replaces)
	}
	c.parent = tree.Parent(r.Replaces)
	if n := len(tree.Siblings(c.parent)); n >= store.MaxSiblings {
		return inputf("this message has %d versions already, the most a conversation keeps at one place", n)
	}
	c.history = tree.OnPathTo(c.history, c.parent)
	return nil
}

// agent is the request's agent: its own, or the stored one it names, or
// the conversation's.
func (e *Engine) agent(ctx context.Context, r Request, conv store.Conversation) (Agent, error) {
	if r.Agent != nil {
		return *r.Agent, nil
	}
	// A stored conversation keeps its agent: AgentName names the agent
	// of a turn without one (the console, a conversation's first message).
	name := conv.Agent
	if name == "" {
		name = r.AgentName
	}
	if e.cfg.Agents == nil || name == "" {
		return Agent{}, errors.New("engine: the request names no agent")
	}
	ag, err := e.cfg.Agents.Agent(ctx, r.OrgID, name)
	switch {
	case errors.Is(err, store.ErrNotFound) && conv.Agent == "":
		return Agent{}, inputf("no agent named %q", name)
	case errors.Is(err, store.ErrNotFound):
		return Agent{}, inputf("the conversation's agent %q no longer exists", name)
	case err != nil:
		return Agent{}, fmt.Errorf("stored agent %s: %w", name, err)
	}
	return ag, nil
}

// chosenModel is ag with Model the one the turn runs on: for a
// conversation not stored yet, the request's ModelRef (refused when the
// agent does not offer it); for a stored one, its choice while the agent
// still offers it (an admin may have taken it off the list since); else
// the agent's own.
func chosenModel(r Request, conv store.Conversation, ag Agent) (Agent, error) {
	ref := conv.Model
	if conv.ID == "" {
		ref = r.ModelRef
	}
	if ref == "" {
		return ag, nil
	}
	m, ok := ag.Offers(ref)
	switch {
	case ok:
		ag.Model = m
	case conv.ID == "":
		return ag, inputf("model %q is not one the agent %q offers", ref, ag.Agent.Name)
	}
	return ag, nil
}

// model is the request's model, or the one the agent names opened under
// the runtime. A dry run goes on without one.
func (e *Engine) model(ctx context.Context, r Request, rt Runtime, m turn.Model) (llm.Model, error) {
	if r.Model != nil {
		return r.Model, nil
	}
	if rt.Models == nil {
		if r.DryRun {
			return nil, nil
		}
		return nil, inputf("%s", NoModel(nil))
	}
	mod, err := rt.Models.Open(ctx, m)
	if err != nil && !r.DryRun {
		return nil, inputf("%s", NoModel(err))
	}
	if err != nil {
		return nil, nil
	}
	return mod, nil
}

// facts builds the turn's facts, final: the model the turn runs on, the
// switches in force (the organisation's under the agent's), the network
// mode and backends, and, answering a paused turn, that turn's id and
// timezone.
func (e *Engine) facts(r Request, ag Agent, c *Collected) turn.Facts {
	payer := r.Payer
	if payer == "" {
		payer = r.OrgID
	}
	f := turn.Facts{
		TurnID: r.TurnID,
		Start:  e.cfg.Now(),
		Caller: r.Caller,
		Place: turn.Place{OrgID: r.OrgID, ConversationID: r.ConversationID,
			ChannelID: r.ChannelID, CommunityID: r.CommunityID, Surface: r.Surface},
		Agent:    ag.Agent,
		Model:    ag.Model,
		Backends: slices.Clone(c.runtime.Backends),
		Network:  c.runtime.Network,
		Payer:    payer,
	}
	if r.Scheduled != nil {
		sc := *r.Scheduled
		sc.Tools = slices.Clone(sc.Tools)
		f.Scheduled = &sc
	}
	if f.TurnID == "" {
		f.TurnID = e.cfg.NewID("turn_")
	}
	f.Caller.Permissions = slices.Clone(r.Caller.Permissions)
	f.Agent.Switches = mergeSwitches(c.runtime.Switches, ag.Agent.Switches)
	if c.model != nil {
		f.Model.Provider, f.Model.Name, _ = strings.Cut(c.model.Ref(), ":")
	}
	f.Model.Caps = providers.Effective(ag.Model.Caps, c.model)
	if c.paused != nil {
		f.TurnID, f.Caller.Timezone = c.paused.ID, c.paused.Timezone
	}
	return f
}

// mergeSwitches is the organisation's switches with the agent's on top
// (an agent's explicit switch wins); never nil.
func mergeSwitches(org, agent map[string]bool) map[string]bool {
	out := maps.Clone(org)
	if out == nil {
		out = map[string]bool{}
	}
	maps.Copy(out, agent)
	return out
}

// attached fills the facts of what is attached to the conversation and
// the agent (its knowledge and skills), and the short-term memory of its thread, from their sources (part of collecting: nothing later reads
// them again).
func (e *Engine) attached(ctx context.Context, f *turn.Facts) error {
	var err error
	if e.cfg.Attachments != nil && f.Place.ConversationID != "" {
		if f.Attachments, err = e.cfg.Attachments.CountAttachments(ctx, f.Place.OrgID, f.Place.ConversationID); err != nil {
			return fmt.Errorf("count attachments: %w", err)
		}
	}
	if e.cfg.Knowledge != nil {
		if f.Knowledge, err = e.cfg.Knowledge.HasKnowledge(ctx, f.Place.OrgID, f.Agent.Name); err != nil {
			return fmt.Errorf("read knowledge: %w", err)
		}
	}
	if err := e.skills(ctx, f); err != nil {
		return err
	}
	return e.shortTerm(ctx, f)
}

// skills reads the names and descriptions of the skills attached to the
// turn's agent into its facts.
func (e *Engine) skills(ctx context.Context, f *turn.Facts) error {
	if e.cfg.Skills == nil || f.Agent.Name == "" {
		return nil
	}
	sks, err := e.cfg.Skills.AgentSkills(ctx, f.Place.OrgID, f.Agent.Name)
	if err != nil {
		return fmt.Errorf("read skills: %w", err)
	}
	for _, s := range sks {
		f.Skills = append(f.Skills, turn.Skill{Name: s.Name, Description: s.Description})
	}
	return nil
}

// shortTerm reads the short-term memory of the turn's thread into its
// facts, when its switches keep one.
func (e *Engine) shortTerm(ctx context.Context, f *turn.Facts) error {
	thread := f.Scope().Thread()
	if e.cfg.ShortTerms == nil || thread == "" || !turn.ShortTermMemoryOn(f.Agent.Switches) {
		return nil
	}
	m, err := e.cfg.ShortTerms.GetShortTerm(ctx, f.Place.OrgID, thread)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("read short-term memory: %w", err)
	}
	f.ShortTermMemory = m.Text
	return nil
}

// budget reads the turn's budgets into its facts and, unless the turn is
// a dry run, refuses it when one is used up this month.
func (e *Engine) budget(ctx context.Context, r Request, f *turn.Facts) error {
	if e.cfg.Budgets == nil {
		return nil
	}
	l, err := e.cfg.Budgets.BudgetLimits(ctx, f.Place.OrgID, f.Caller.UserID)
	if err != nil {
		return fmt.Errorf("read budgets: %w", err)
	}
	f.Budget = budget.Limits(l)
	if r.DryRun {
		return nil
	}
	return budget.Guard{Store: e.cfg.Budgets, Now: e.cfg.Now}.Check(ctx, *f)
}
