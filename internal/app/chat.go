package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/surface/terminal"
)

var chatUsage = usageText("chat")

type chatFlags struct {
	in      TurnInput
	df      dataFlags
	dtm     string
	asJSON  bool
	message string
}

func parseChat(args []string, env Env) (chatFlags, error) {
	fs := newFlags("chat")
	var c chatFlags
	c.in.register(fs)
	fs.StringVar(&c.in.ConversationID, "conversation", "", "")
	c.df.register(fs)
	fs.StringVar(&c.dtm, "dtm", "", "")
	fs.BoolVar(&c.asJSON, "json", false, "")
	pos, err := parse(fs, args, chatUsage, env.Stdout)
	if err != nil {
		return c, err
	}
	if c.dtm != "" {
		// "follow" defers to the stored override, so it is no override.
		m, err := intent.ParseUserMode(c.dtm)
		if err != nil {
			return c, usagef("--dtm: %v", err)
		}
		if m == intent.UserFollow {
			m = ""
		}
		c.dtm = m
	}
	switch len(pos) {
	case 0:
	case 1:
		c.message = pos[0]
		if strings.TrimSpace(c.message) == "" {
			return c, usagef("chat: MESSAGE is empty")
		}
	default:
		return c, usagef("chat: give at most one MESSAGE argument (quote it)")
	}
	return c, nil
}

// session is one chat's world: the runtime, the engine, the model and
// the request every message starts from (the agent file read once).
type session struct {
	env Env
	rt  *runtime
	eng *engine.Engine
	req engine.Request
	out *terminal.Printer
}

func runChat(ctx context.Context, args []string, env Env) error {
	c, err := parseChat(args, env)
	if err != nil {
		return err
	}
	s, err := openSession(ctx, c, env)
	if err != nil {
		return err
	}
	defer s.close()
	if c.message != "" {
		return s.say(ctx, c.message)
	}
	banner := fmt.Sprintf("conversation %s — Ctrl-D to end", s.req.ConversationID)
	return terminal.Loop(ctx, env.Stdin, s.out, banner, s.say, func(err error) bool { return errors.As(err, new(resultError)) })
}

func openSession(ctx context.Context, c chatFlags, env Env) (*session, error) {
	data := c.df
	cfg, err := data.loadConfig()
	if err != nil {
		return nil, err
	}
	c.in.Now = env.Now()
	req, err := turnRequest(c.in)
	if err != nil {
		return nil, err
	}
	ms := models{getenv: env.Getenv, http: &http.Client{}, logger: env.Logger}
	model, notice, err := ms.open(ctx, cfg, req.Agent.Model)
	if err != nil {
		return nil, err
	}
	if notice != "" {
		fmt.Fprintf(env.Stderr, "quiver: %s\n", notice)
	}
	det, err := loadDetector(cfg)
	if err != nil {
		return nil, err
	}
	o, err := data.openUnder(ctx, cfg, needRuntime, env)
	if err != nil {
		return nil, err
	}
	rt := o.rt
	if req.ConversationID == "" {
		req.ConversationID = rt.ids.New("conv_")
	} else {
		// Before anything reads it (a paused turn's history) or writes
		// into it (Deliberate Tool Mode's open families, the turn).
		// Claimed, not only checked: an id no one holds yet becomes the
		// caller's now, so no one can create it between here and the turn.
		if err := claimConversation(ctx, rt.st, req, env.Now()); err != nil {
			rt.close()
			return nil, err
		}
	}
	req.Model, req.UserMode = model, c.dtm
	s := &session{env: env, rt: rt, req: req, out: &terminal.Printer{Out: env.Stdout, Err: env.Stderr, JSON: c.asJSON}}
	go rt.mcp.Run(ctx) // idle connections closed while the session lasts
	s.eng = rt.newEngine(cfg, det, false, env)
	return s, nil
}

// close releases the session's connections and store.
func (s *session) close() { s.rt.close() }

// say runs one user message: a new turn, or the answer to a paused one.
func (s *session) say(ctx context.Context, message string) error {
	r := s.req
	r.Message = message
	warn := func(w string) { fmt.Fprintf(s.env.Stderr, "quiver: prompt warning: %s\n", w) }
	out, err := s.eng.Respond(ctx, r, warn, s.out.Event)
	if err != nil {
		return cliError(err)
	}
	if out.Stop == agent.StopError {
		return resultError{}
	}
	return nil
}
