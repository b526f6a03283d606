package app

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path/filepath"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/attachment"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/surface/terminal"
)

// ChatOptions is what "quiver chat" runs with.
type ChatOptions struct {
	// Turn is who the chat is for and with which agent. A ConversationID
	// is claimed for the caller (refused when another user's); "" starts
	// a new conversation.
	Turn TurnInput
	// Data is the configuration and the data folder.
	Data Data
	// UserMode is the caller's Deliberate Tool Mode override for the
	// chat, "off" or "on"; "" defers to the stored one.
	UserMode string
	// Message, when set, is the one message sent; else the messages are
	// Env.Stdin's lines, until it ends.
	Message string
	// Attach are files (paths) attached to the conversation before its
	// first message, in order; a file the attachments refuse stops the
	// chat with a *UsageError before any turn.
	Attach []string
	// JSON prints the turns' events as JSON lines instead of text.
	JSON bool
	// Ran, when set, is given the conversation's id once the one
	// Message's turn ran (the conversation holds it), for the CLI to say
	// how to read it again.
	Ran func(conversationID string)
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

// Chat runs a conversation with the agent: the one Message, or each line
// of Env.Stdin, printed as it streams. A tool call's error result is
// ErrReported; a message or turn the engine refuses is a *UsageError.
func Chat(ctx context.Context, o ChatOptions, env Env) error {
	env.defaults()
	s, err := openSession(ctx, o, env)
	if err != nil {
		return err
	}
	defer s.close()
	if o.Message != "" {
		err := s.say(ctx, o.Message)
		if o.Ran != nil && (err == nil || errors.Is(err, ErrReported)) {
			o.Ran(s.req.ConversationID)
		}
		return err
	}
	banner := fmt.Sprintf("conversation %s — Ctrl-D to end", s.req.ConversationID)
	return terminal.Loop(ctx, env.Stdin, s.out, banner, s.say, func(err error) bool { return errors.Is(err, ErrReported) })
}

func openSession(ctx context.Context, c ChatOptions, env Env) (*session, error) {
	data := c.Data.flags()
	cfg, err := data.loadConfig()
	if err != nil {
		return nil, err
	}
	req, err := turnRequest(c.Turn)
	if err != nil {
		return nil, err
	}
	ms := models{providers.Shared{Getenv: env.Getenv, Probe: &http.Client{}, Logger: env.Logger}}
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
	if req.ConversationID == "" && len(c.Attach) == 0 {
		req.ConversationID = rt.ids.New("conv_")
	} else {
		if req.ConversationID == "" {
			// The files need the conversation to be the caller's now.
			req.ConversationID = rt.ids.New("conv_")
		}
		// Before anything reads it (a paused turn's history) or writes
		// into it (Deliberate Tool Mode's open families, the turn).
		// Claimed, not only checked: an id no one holds yet becomes the
		// caller's now, so no one can create it between here and the turn.
		if err := claimConversation(ctx, rt.st, req, env.Now()); err != nil {
			rt.close()
			return nil, err
		}
	}
	if err := attachFiles(ctx, rt, req, c.Attach, env); err != nil {
		rt.close()
		return nil, err
	}
	req.Model, req.UserMode = model, c.UserMode
	s := &session{env: env, rt: rt, req: req, out: &terminal.Printer{Out: env.Stdout, Err: env.Stderr, JSON: c.JSON}}
	go rt.mcp.pool.Run(ctx) // idle connections closed while the session lasts
	// The Printer shows a turn's failure; its log line would repeat it.
	quiet := env
	quiet.Logger = terminal.Quiet(env.Logger)
	s.eng = rt.newEngine(cfg, det, false, quiet)
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
		return err
	}
	if out.Stop == agent.StopError {
		return ErrReported
	}
	return nil
}

// attachFiles attaches the files at paths to the request's conversation,
// each at most store.MaxAttachmentBytes, read after a size check.
func attachFiles(ctx context.Context, rt *runtime, req engine.Request, paths []string, env Env) error {
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return usagef("--attach: %v", err)
		}
		if !info.Mode().IsRegular() {
			return usagef("--attach %s: not a regular file", p)
		}
		if info.Size() > store.MaxAttachmentBytes {
			return usagef("--attach %s: %d bytes; the limit for one file is %d MiB", p, info.Size(), store.MaxAttachmentBytes>>20)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return usagef("--attach: %v", err)
		}
		name := filepath.Base(p)
		a, err := rt.attach.Add(ctx, req.OrgID, req.Caller.UserID, req.ConversationID,
			attachment.File{Name: name, MediaType: mime.TypeByExtension(filepath.Ext(name)), Data: data})
		if errors.Is(err, attachment.ErrRefused) {
			return usagef("--attach %s: %v", p, err)
		}
		if err != nil {
			return err
		}
		if a.Status != store.AttachmentReady {
			fmt.Fprintf(env.Stderr, "quiver: attached %s, but it cannot be read: %s\n", name, a.Error)
			continue
		}
		fmt.Fprintf(env.Stderr, "quiver: attached %s (%s, %d characters)\n", name, a.Kind, a.Chars)
	}
	return nil
}
