package app

import (
	"context"
	"errors"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/surface/terminal"
)

// TranscriptOptions is what "quiver transcript" runs with.
type TranscriptOptions struct {
	// ConversationID is the conversation printed.
	ConversationID string
	// User and Org are whose it must be.
	User, Org string
	// Dir is the data folder ("" means the default one, see Data); no key
	// is needed, since a transcript holds no secret.
	Dir string
	// JSON prints the transcript (engine.Transcript) instead of its text
	// form.
	JSON bool
}

// Transcript prints a conversation of the caller's; one that is not
// theirs, or does not exist, is a *UsageError.
func Transcript(ctx context.Context, o TranscriptOptions, env Env) error {
	env.defaults()
	op, err := Data{Dir: o.Dir}.flags().open(ctx, needMessages, env)
	if err != nil {
		return err
	}
	defer op.close()
	repos := engine.Repositories{Conversations: op.st, Messages: op.st, Branches: op.st}
	stored, err := repos.Transcript(ctx, ids.Slug(o.Org, "default"), ids.Slug(o.User, "cli"), o.ConversationID)
	if errors.Is(err, engine.ErrNoConversation) {
		return usagef("transcript: no conversation %q for this user", o.ConversationID)
	}
	if err != nil {
		return err
	}
	out := engine.NewTranscript(o.ConversationID, stored)
	return terminal.Emit(env.Stdout, o.JSON, out)
}
