package app

import (
	"context"
	"errors"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/ids"
)

var transcriptUsage = usageText("transcript")

func runTranscript(ctx context.Context, args []string, env Env) error {
	fs := newFlags("transcript")
	var user, org, data string
	var asJSON bool
	fs.StringVar(&user, "user", "", "")
	fs.StringVar(&org, "org", "", "")
	fs.StringVar(&data, "data", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parseArgs(fs, args, transcriptUsage, env.Stdout, 1, "give exactly one CONVERSATION_ID")
	if err != nil {
		return err
	}
	o, err := dataFlags{data: data}.open(ctx, needMessages, env)
	if err != nil {
		return err
	}
	defer o.close()
	repos := engine.Repositories{Conversations: o.st, Messages: o.st}
	stored, err := repos.Transcript(ctx, ids.Slug(org, "default"), ids.Slug(user, "cli"), pos[0])
	if errors.Is(err, engine.ErrNoConversation) {
		return usagef("transcript: no conversation %q for this user", pos[0])
	}
	if err != nil {
		return err
	}
	out := engine.NewTranscript(pos[0], stored)
	return emit(env.Stdout, asJSON, out)
}
