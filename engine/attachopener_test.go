package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestAttachmentOpener: under Deliberate Tool Mode, a conversation with
// files attached opens the targets that read them (read_document's
// media-analysis) by the attachment opener; one without does not.
func TestAttachmentOpener(t *testing.T) {
	ctx := context.Background()
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, id := range []string{"with", "without"} {
		if err := st.PutConversation(ctx, store.Conversation{ID: id, OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}); err != nil {
			t.Fatal(err)
		}
	}
	eng := engine.New(engine.Config{
		Runtime:     engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public"}),
		Detector:    intent.New(packs),
		Repos:       engine.Repositories{Conversations: st, Messages: st, Turns: st},
		Attachments: attachments{"acme/with": 1},
	})
	for _, c := range []struct {
		conv string
		want bool
	}{{"with", true}, {"without", false}} {
		r := request("ana", c.conv, false)
		r.Message = "thanks, that is all"
		r.Deliberate = &intent.Settings{Enabled: true}
		ins, err := eng.Inspect(ctx, r, "")
		if err != nil {
			t.Fatal(err)
		}
		opened := slices.ContainsFunc(ins.Matches, func(m intent.Match) bool {
			return m.Target == intent.MediaAnalysis && m.Source == intent.SourceAttachment
		})
		if opened != c.want {
			t.Errorf("conversation %s: attachment opener matched %v, want %v (matches %+v)", c.conv, opened, c.want, ins.Matches)
		}
	}
}
