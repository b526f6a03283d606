package agent

import (
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/llm"
)

// Refusals. A model may ask for any number of calls in one reply, up to
// its output limit; the loop runs at most Config.MaxCallsPerStep of them
// and refuses the rest. Each call kept in the transcript costs two
// messages (the call and its answer) in the store and in every later
// request, so refused calls are kept compactly: of each reason a call is
// refused for, the first such call of the reply is kept, answered with a
// refusal that says how many calls it stands for; the others are left
// out of the transcript altogether — the reply as stored, and as sent
// back to the model, does not hold them, so no provider expects an
// answer to them (OpenAI and Anthropic require one result per call the
// assistant message holds; Gemini matches results to calls). A step
// then keeps at most Config.MaxCallsPerStep calls run plus one refused
// call per reason, however many the model asked for. The first call of a
// reply is always kept (it is run, or the first of its reason), so the
// provider's signature on it travels on.

// refusal is why a call of a reply is not run; admitted: it runs.
type refusal int

const (
	admitted refusal = iota
	refusedNameless
	refusedStep
	refusedTurn
	refusalKinds // how many kinds of refusal, admitted included
)

// keptCall is a call the transcript keeps, and whether it runs.
type keptCall struct {
	call llm.ToolCall
	why  refusal
}

// stepPlan decides, call by call as a reply streams in, which of its
// calls run and which the transcript keeps (see Refusals). The zero value
// is not ready: use run.newPlan.
type stepPlan struct {
	perStep, perTurn int // the limits, for the refusals' text
	left             int // calls the turn may still run
	asked            int // calls the reply asked for
	ran              int // calls admitted
	refused          [refusalKinds]int
	kept             []keptCall
}

// newPlan starts the plan of a reply, with what is left of the turn's
// budget.
func (rn *run) newPlan() *stepPlan {
	cfg := rn.r.cfg
	return &stepPlan{perStep: cfg.MaxCallsPerStep, perTurn: cfg.MaxCallsPerTurn, left: max(0, cfg.MaxCallsPerTurn-rn.callsRun)}
}

// add decides about the reply's next call and reports whether the
// transcript keeps it. Checked in order: a call without a name (blank
// counts as none), a call past Config.MaxCallsPerStep, a call past what
// is left of Config.MaxCallsPerTurn.
func (p *stepPlan) add(c llm.ToolCall) bool {
	p.asked++
	why := admitted
	switch {
	case strings.TrimSpace(c.Name) == "":
		why = refusedNameless
	case p.ran >= p.perStep:
		why = refusedStep
	case p.ran >= p.left:
		why = refusedTurn
	default:
		p.ran++
	}
	p.refused[why]++
	if why != admitted && p.refused[why] > 1 {
		return false
	}
	p.kept = append(p.kept, keptCall{call: c, why: why})
	return true
}

// calls are the calls the transcript keeps, in reply order.
func (p *stepPlan) calls() []llm.ToolCall {
	out := make([]llm.ToolCall, len(p.kept))
	for i, k := range p.kept {
		out[i] = k.call
	}
	return out
}

// leftOut is how many calls of the reply the transcript does not keep.
func (p *stepPlan) leftOut() int { return p.asked - len(p.kept) }

// answer is the refusal of a kept call refused for why, which stands for
// every call of the reply refused for it: one line that names the limit,
// so that the model can ask again within it, and how many calls were
// left out.
func (p *stepPlan) answer(why refusal) string {
	others := p.refused[why] - 1
	switch why {
	case refusedNameless:
		if others == 0 {
			return "Not run: this tool call has no tool name; call again with the name of one of your tools."
		}
		return fmt.Sprintf("Not run: this tool call has no tool name, nor have %d more calls of this reply, which are left out of the conversation; "+
			"call again with the name of one of your tools.", others)
	case refusedStep:
		if others == 0 {
			return fmt.Sprintf("Not run: this reply asked for %d tool calls, more than the limit of %d per step; ask again with at most %d calls at once.",
				p.asked, p.perStep, p.perStep)
		}
		return fmt.Sprintf("Not run: this reply asked for %d tool calls, more than the limit of %d per step; this call and %d more past the limit "+
			"were not run, and those %d are left out of the conversation; ask again with at most %d calls at once.",
			p.asked, p.perStep, others, others, p.perStep)
	case refusedTurn:
		if others == 0 {
			return fmt.Sprintf("Not run: this turn has used its limit of %d tool calls; answer with what you have.", p.perTurn)
		}
		return fmt.Sprintf("Not run: this turn has used its limit of %d tool calls; this call and %d more of this reply were not run, "+
			"and those %d are left out of the conversation; answer with what you have.", p.perTurn, others, others)
	}
	return ""
}
