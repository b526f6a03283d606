package surface

import (
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/turn"
)

// The surfaces Quiver knows, by the name turn.Place.Surface carries.
const (
	// WebChat is Quiver's own conversations: the web chat, and the API
	// and CLI, which store the same conversations. Place.Surface "" is
	// WebChat.
	WebChat = "webchat"
	// Discord is a Discord server's channels and threads.
	Discord = "discord"
)

// Capability is one thing a surface can do to messages.
type Capability uint16

// The capabilities. Each names the optional interface a surface that
// declares it implements.
const (
	// List is message metadata: Surface.Recent (every surface has it).
	List Capability = 1 << iota
	// React is Reactor.
	React
	// Reply is Replier.
	Reply
	// Pin is Pinner.
	Pin
	// Edit and Delete are Editor.
	Edit
	Delete
	// Threads is Threader.
	Threads
	// CrossPost is Poster.
	CrossPost
	// Stickers is Stickerer.
	Stickers
	// Avatars is AvatarReader.
	Avatars
	// Blocking is Blocker.
	Blocking
)

// Capabilities is a set of Capability.
type Capabilities uint16

// Has reports whether c holds every capability of want.
func (c Capabilities) Has(want Capability) bool { return Capabilities(want)&c == Capabilities(want) }

// capabilityNames names the capabilities for people, in bit order.
var capabilityNames = []string{"list", "react", "reply", "pin", "edit", "delete", "threads", "cross_post", "stickers", "avatars", "blocking"}

// String lists the capabilities by name, comma separated, in a fixed order.
func (c Capabilities) String() string {
	var names []string
	for i, n := range capabilityNames {
		if c&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// Spec is what a known surface can do, and why it lacks the rest.
type Spec struct {
	Name string
	// Label is how a sentence names it ("the web chat").
	Label string
	Caps  Capabilities
	// Lacks says, per capability the surface lacks, why; a missing entry
	// reads "LABEL cannot do that".
	Lacks map[Capability]string
}

// specs are the known surfaces. Discord's capabilities are declared here
// so its implementation only has to provide them.
var specs = []Spec{
	{Name: WebChat, Label: "the web chat",
		Caps: Capabilities(List | React | Pin | Edit | Delete | Threads | CrossPost),
		Lacks: map[Capability]string{
			Reply:    "the web chat has no replies to single messages: the agent's answer is the reply",
			Stickers: "the web chat has no stickers",
			Avatars:  "the web chat has no profile pictures",
			Blocking: "the web chat has one person per conversation: there is no one to block",
		}},
	{Name: Discord, Label: "Discord",
		Caps: Capabilities(List | React | Reply | Pin | Edit | Delete | Threads | CrossPost | Stickers | Avatars | Blocking)},
}

// Lookup returns the spec of the named surface; "" is WebChat. An
// unknown name gives ok false.
func Lookup(name string) (Spec, bool) {
	if name == "" {
		name = WebChat
	}
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Known returns the known surfaces' specs in a fixed order (WebChat
// first). The maps are shared: do not modify them.
func Known() []Spec { return append([]Spec(nil), specs...) }

// Why returns "" when the named surface has every capability of want,
// else why not: the spec's reason for the first one it lacks, in bit
// order. An unknown surface lacks everything.
func Why(name string, want Capabilities) string {
	sp, ok := Lookup(name)
	if !ok {
		return fmt.Sprintf("surface %q is not one Quiver knows", name)
	}
	for i := range capabilityNames {
		c := Capability(1 << i)
		if want&Capabilities(c) == 0 || sp.Caps.Has(c) {
			continue
		}
		if r, ok := sp.Lacks[c]; ok {
			return r
		}
		return fmt.Sprintf("%s cannot %s", sp.Label, strings.ReplaceAll(capabilityNames[i], "_", " "))
	}
	return ""
}

// Any returns "" when the named surface has at least one capability of
// want, else Why's reason for the first: a tool with several actions is
// declared where one of them works.
func Any(name string, want Capabilities) string {
	sp, ok := Lookup(name)
	if ok && sp.Caps&want != 0 {
		return ""
	}
	return Why(name, want)
}

// Requires is a tool.Spec requirement: "" where the turn's surface has
// every capability of want, else the reason it lacks one.
func Requires(want Capabilities) func(turn.Selection) string {
	return func(s turn.Selection) string { return Why(s.Surface, want) }
}

// RequiresAny is Requires for a tool declared where any one of want
// works.
func RequiresAny(want Capabilities) func(turn.Selection) string {
	return func(s turn.Selection) string { return Any(s.Surface, want) }
}

// Conforms returns an error naming every capability s declares without
// implementing its interface, and every one it declares that its known
// spec does not: a test of each implementation calls it.
func Conforms(s Surface) error {
	caps := s.Capabilities()
	var missing []string
	check := func(c Capability, ok bool) {
		if caps.Has(c) && !ok {
			missing = append(missing, Capabilities(c).String())
		}
	}
	_, r := s.(Reactor)
	check(React, r)
	_, rp := s.(Replier)
	check(Reply, rp)
	_, p := s.(Pinner)
	check(Pin, p)
	_, e := s.(Editor)
	check(Edit, e)
	check(Delete, e)
	_, t := s.(Threader)
	check(Threads, t)
	_, po := s.(Poster)
	check(CrossPost, po)
	_, st := s.(Stickerer)
	check(Stickers, st)
	_, a := s.(AvatarReader)
	check(Avatars, a)
	_, b := s.(Blocker)
	check(Blocking, b)
	if len(missing) > 0 {
		return fmt.Errorf("surface %s declares %s without implementing them", s.Name(), strings.Join(missing, ", "))
	}
	sp, ok := Lookup(s.Name())
	if !ok {
		return fmt.Errorf("surface %s is not a known surface", s.Name())
	}
	if extra := caps &^ sp.Caps; extra != 0 {
		return fmt.Errorf("surface %s declares %s, which its spec does not", s.Name(), extra)
	}
	return nil
}
