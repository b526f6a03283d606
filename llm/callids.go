package llm

import "strconv"

// CallIDs hands out the tool call IDs of one reply, each distinct from
// the others. A provider may give some calls no ID (the adapter then
// makes one up, such as "call_3") and a later call of the same reply an
// ID equal to a made-up one, or, from a faulty server, two calls one ID;
// the results are matched to the calls by ID, and OpenAI and Anthropic
// refuse a request whose calls share one. An adapter passes each call's
// ID through Unique before it emits the call, so an ID once emitted
// never changes. The zero value is ready; not safe for concurrent use.
type CallIDs struct{ taken map[string]bool }

// Unique returns id when no call of the reply has it yet, else id with
// the first free suffix "_2", "_3", …, and takes what it returns.
func (c *CallIDs) Unique(id string) string {
	if c.taken == nil {
		c.taken = make(map[string]bool)
	}
	out := id
	for n := 2; c.taken[out]; n++ {
		out = id + "_" + strconv.Itoa(n)
	}
	c.taken[out] = true
	return out
}
