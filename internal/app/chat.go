package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
)

const chatUsage = `Usage: quiver chat --agent FILE [flags] [MESSAGE]

Talks with an agent through a real model. With MESSAGE, runs one turn and
exits. Without it, reads messages: interactively on a terminal (streaming the
answer, showing tool calls as they run, asking clarifying questions), or one
message per line when standard input is not a terminal, all in the same
conversation. A message sent to a conversation whose last turn paused on a
clarifying question is the answer to it.

Models: --model or the agent's model, as provider:model. Keys come from
--config or OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY,
OPENROUTER_API_KEY; base URLs from OPENAI_BASE_URL, OLLAMA_HOST, ... With no
provider configured, Quiver uses an Ollama server on localhost:11434.

Flags:
  --agent FILE        agent definition (YAML), required
  --model P:NAME      override the agent's model
  --conversation ID   continue this conversation (default: a new one); it must
                      be the caller's own (another user's is refused, exit 2)
  --config FILE       deployment configuration: providers, prices, max_steps,
                      text_tools, network mode, web engines (docs/models.md,
                      docs/web.md)
  --user NAME         caller's display name
  --org O             caller's organisation
  --department D      caller's department
  --tz ZONE           caller's IANA timezone
  --data DIR          data folder (default $QUIVER_DATA, else $XDG_DATA_HOME/quiver,
                      else ~/.local/share/quiver)
  --dtm MODE          Deliberate Tool Mode for this session: on, off, or follow
                      (the default: the community's setting and your stored
                      override; see "quiver triggers" and docs/intent.md)
  --json              print one JSON event per line (text, tool_call,
                      tool_result, pause, next_actions, usage, done, error),
                      each with the conversation id
`

type chatFlags struct {
	in      TurnInput
	dtm     string
	config  string
	data    string
	asJSON  bool
	message string
}

func parseChat(args []string, env Env) (chatFlags, error) {
	fs := newFlags("chat")
	var c chatFlags
	fs.StringVar(&c.in.AgentFile, "agent", "", "")
	fs.StringVar(&c.in.Model, "model", "", "")
	fs.StringVar(&c.in.ConversationID, "conversation", "", "")
	fs.StringVar(&c.config, "config", "", "")
	fs.StringVar(&c.in.Caller.User, "user", "", "")
	fs.StringVar(&c.in.Caller.Org, "org", "", "")
	fs.StringVar(&c.in.Caller.Department, "department", "", "")
	fs.StringVar(&c.in.Caller.Timezone, "tz", "", "")
	fs.StringVar(&c.data, "data", "", "")
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
	out *chatPrinter
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
	return s.readLoop(ctx)
}

func openSession(ctx context.Context, c chatFlags, env Env) (*session, error) {
	data := dataFlags{config: c.config, data: c.data}
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
	s := &session{env: env, rt: rt, req: req, out: &chatPrinter{w: env.Stdout, errw: env.Stderr, json: c.asJSON}}
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
	out, err := s.eng.Respond(ctx, r, warn, s.out.event)
	if err != nil {
		return cliError(err)
	}
	if out.Stop == agent.StopError {
		return resultError{}
	}
	return nil
}

// readLoop reads messages until end of input: a prompt on a terminal, one
// message per line otherwise.
func (s *session) readLoop(ctx context.Context) error {
	in := s.env.Stdin
	if in == nil {
		in = os.Stdin
	}
	tty := isTerminal(in)
	if tty && !s.out.json {
		fmt.Fprintf(s.env.Stderr, "conversation %s — Ctrl-D to end\n", s.req.ConversationID)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		if tty && !s.out.json {
			fmt.Fprint(s.env.Stdout, s.out.promptText())
		}
		if !sc.Scan() {
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := s.say(ctx, line); err != nil && !errors.As(err, new(resultError)) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
