// Package artifacts provides the tools that make the documents a person
// keeps (store.Artifacts): create_artifact, rewrite_artifact,
// update_artifact and save_artifact, and the visual checks of HTML and
// SVG artifacts in a headless browser (browser.Checker): inspect_artifact,
// measure_layout and print_pdf.
//
// An HTML or SVG artifact's change is a draft when a browser can check
// it: inspect_artifact renders the draft and marks it inspected, and
// save_artifact refuses a draft not inspected since its last change.
// Where no browser runs, the three check tools and save_artifact are left
// out of every turn with that reason, and visual changes are saved as
// versions directly, unchecked (the result says so).
//
// Every tool is scoped to the turn's organisation and conversation: an
// artifact of another conversation is not found, whatever its ID.
package artifacts

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/browser"
	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Family is the artifact tools' family, the name an allowlist gives to
// admit them all.
const Family = "artifacts"

// Names are the tools of the family in registration order.
var Names = []string{"create_artifact", "rewrite_artifact", "update_artifact", "save_artifact",
	"inspect_artifact", "measure_layout", "print_pdf"}

// MaxEdits bounds the edits of one update_artifact call.
const MaxEdits = 20

// checkTimeout bounds a check: up to browser.MaxPages pages, each under
// the browser's page timeout, two at a time.
const checkTimeout = 3 * time.Minute

var (
	//go:embed create_artifact.md
	createDescription string
	//go:embed visual_rule.md
	visualRule string
	//go:embed rewrite_artifact.md
	rewriteDescription string
	//go:embed update_artifact.md
	updateDescription string
	//go:embed save_artifact.md
	saveDescription string
	//go:embed inspect_artifact.md
	inspectDescription string
	//go:embed measure_layout.md
	measureDescription string
	//go:embed print_pdf.md
	printDescription string
)

// Config is what the artifact tools run on.
type Config struct {
	// Store holds the artifacts; nil keeps the tools, whose calls then
	// fail with store.ErrNoStore (commands that never dispatch).
	Store store.Artifacts
	// Checker renders visual artifacts. Unavailable, when not empty, says
	// why no browser runs here: inspect_artifact, measure_layout,
	// print_pdf and save_artifact are then left out of every turn with
	// that reason, and visual changes are saved unchecked. A nil Checker
	// with an empty Unavailable keeps the tools, whose checks then fail
	// with an infrastructure error (commands that never dispatch).
	Checker     browser.Checker
	Unavailable string
	// Workspace is the workspaces' configuration: print_pdf writes there
	// under its quotas. An empty Root leaves print_pdf out.
	Workspace workspace.Config
	// Quota lowers the conversation's bounds (store.ArtifactQuota); zero
	// fields mean the store's.
	Quota store.ArtifactQuota
	// Now is the clock; nil means time.Now. IDs makes artifact IDs; nil
	// means ids.Random.
	Now func() time.Time
	IDs ids.Source
}

// checks reports whether visual changes are drafts checked in a browser.
func (c Config) checks() bool { return c.Unavailable == "" }

// unavailable is why the check tools are left out, "" when they run.
func (c Config) unavailable() string { return c.Unavailable }

// Tools returns the family's tools over cfg, in Names' order.
func Tools(cfg Config) []*tool.Tool {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.IDs = ids.OrRandom(cfg.IDs)
	t := &tools{cfg: cfg}
	checkReq := func(turn.Selection) string { return cfg.unavailable() }
	create := createDescription + "\n" + visualRule
	if !cfg.checks() {
		create = createDescription + "\nHTML and SVG artifacts cannot be checked in a browser on this server; they are saved as written."
	}
	// save_artifact and the checks come with the artifact tools only: the
	// family or create_artifact admits them, never their own names.
	with := []string{"create_artifact"}
	return []*tool.Tool{
		tool.New(tool.Spec{Name: "create_artifact", Family: Family, Description: strings.TrimSpace(create), Access: tool.Write,
			Limits: limits(), Tune: tuneCreate}, t.create),
		tool.New(tool.Spec{Name: "rewrite_artifact", Family: Family, Description: strings.TrimSpace(rewriteDescription),
			Access: tool.Write, Limits: limits(), Tune: tuneContent}, t.rewrite),
		tool.New(tool.Spec{Name: "update_artifact", Family: Family, Description: strings.TrimSpace(updateDescription),
			Access: tool.Write, Limits: append(limits(), tool.Limit{Name: "edits", Value: MaxEdits}), Tune: tuneUpdate}, t.update),
		tool.New(tool.Spec{Name: "save_artifact", Family: Family, AllowAs: with, Description: strings.TrimSpace(saveDescription),
			Access: tool.Write, Requires: checkReq}, t.save),
		tool.New(tool.Spec{Name: "inspect_artifact", Family: Family, AllowAs: with, Description: strings.TrimSpace(inspectDescription),
			Access: tool.Write, Requires: checkReq, Timeout: checkTimeout,
			Limits: []tool.Limit{{Name: "viewports", Value: browser.MaxPages}}, Tune: tuneViewports}, t.inspect),
		tool.New(tool.Spec{Name: "measure_layout", Family: Family, AllowAs: with, Description: strings.TrimSpace(measureDescription),
			Access: tool.Read, Requires: checkReq, Timeout: checkTimeout,
			Limits: []tool.Limit{{Name: "viewports", Value: browser.MaxPages}, {Name: "selectors", Value: maxSelectors}},
			Tune:   tuneMeasure}, t.measure),
		tool.New(tool.Spec{Name: "print_pdf", Family: Family, AllowAs: with, Description: strings.TrimSpace(printDescription),
			Access: tool.Write, Requires: func(turn.Selection) string {
				if cfg.Workspace.Root == "" {
					return "no workspace is configured"
				}
				return cfg.unavailable()
			}, Timeout: checkTimeout, Limits: []tool.Limit{{Name: "pdf_bytes", Value: browser.MaxPDFBytes}}}, t.printPDF),
	}
}

// maxSelectors is what browser.ValidateSelectors accepts.
const maxSelectors = 20

func limits() []tool.Limit {
	return []tool.Limit{{Name: "content_bytes", Value: store.MaxArtifactBytes},
		{Name: "artifacts_per_conversation", Value: store.MaxArtifactsPerConversation},
		{Name: "versions", Value: store.MaxArtifactVersions}}
}

func tuneContent(s *jsonschema.Schema) {
	s.Properties["content"].MinLength = jsonschema.Ptr(1)
	s.Properties["content"].MaxLength = jsonschema.Ptr(store.MaxArtifactBytes)
	s.Properties["title"].MaxLength = jsonschema.Ptr(store.MaxArtifactTitleBytes)
}

func tuneCreate(s *jsonschema.Schema) {
	tuneContent(s)
	kinds := make([]any, len(store.ArtifactKinds))
	for i, k := range store.ArtifactKinds {
		kinds[i] = k
	}
	s.Properties["kind"].Enum = kinds
}

func tuneUpdate(s *jsonschema.Schema) {
	s.Properties["edits"].MinItems = jsonschema.Ptr(1)
	s.Properties["edits"].MaxItems = jsonschema.Ptr(MaxEdits)
	s.Properties["title"].MaxLength = jsonschema.Ptr(store.MaxArtifactTitleBytes)
}

func tuneViewports(s *jsonschema.Schema) {
	s.Properties["viewports"].MaxItems = jsonschema.Ptr(browser.MaxPages)
	v := s.Properties["viewports"].Items
	for _, f := range []string{"width", "height"} {
		v.Properties[f].Minimum = jsonschema.Ptr(float64(browser.MinViewport))
		v.Properties[f].Maximum = jsonschema.Ptr(float64(browser.MaxViewport))
	}
}

func tuneMeasure(s *jsonschema.Schema) {
	tuneViewports(s)
	s.Properties["selectors"].MaxItems = jsonschema.Ptr(maxSelectors)
}

// tools is the handlers' state.
type tools struct{ cfg Config }

// repo returns the store, or an infrastructure error when there is none.
func (t *tools) repo() (store.Artifacts, error) {
	if t.cfg.Store == nil {
		return nil, tool.Infra(fmt.Errorf("artifacts: %w", store.ErrNoStore))
	}
	return t.cfg.Store, nil
}

// get reads the turn's conversation's artifact id, with a message for
// the model when there is none.
func (t *tools) get(ctx context.Context, s tool.Scope, id string) (store.Artifact, error) {
	r, err := t.repo()
	if err != nil {
		return store.Artifact{}, err
	}
	a, err := r.GetArtifact(ctx, s.OrgID, s.ConversationID, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Artifact{}, fmt.Errorf("no artifact %q in this conversation", id)
	}
	if err != nil {
		return store.Artifact{}, tool.Infra(err)
	}
	return a, nil
}

// storeErr turns a refused write into the model's message; anything else
// is an infrastructure error.
func storeErr(op string, err error) error {
	for _, e := range []error{store.ErrArtifactInvalid, store.ErrArtifactQuota, store.ErrArtifactNoDraft,
		store.ErrArtifactNotInspected, store.ErrConflict} {
		if errors.Is(err, e) {
			return fmt.Errorf("%s: %s", op, userMessage(err))
		}
	}
	return tool.Infra(fmt.Errorf("%s: %w", op, err))
}

// userMessage is err's text without the backend's prefix ("sqlite: create
// artifact: ").
func userMessage(err error) string {
	msg := err.Error()
	for _, p := range []string{"sqlite: ", "postgres: "} {
		if strings.HasPrefix(msg, p) {
			if i := strings.Index(msg[len(p):], ": "); i >= 0 {
				return msg[len(p)+i+2:]
			}
		}
	}
	return msg
}

// current is the content a change or check starts from: the draft when
// there is one, else the newest version.
func current(a store.Artifact) string {
	if a.Draft != nil {
		return a.Draft.Content
	}
	return a.Content
}

// state describes a after a write, for the model.
func (t *tools) state(verb string, a store.Artifact) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s artifact %s %q (%s", verb, a.ID, a.Title, a.Kind)
	if a.Language != "" {
		fmt.Fprintf(&b, ", %s", a.Language)
	}
	b.WriteString(")")
	switch {
	case a.Draft != nil:
		fmt.Fprintf(&b, ": draft %d, not inspected yet. Call inspect_artifact to check it, then save_artifact.", a.Draft.Rev)
		if a.Version > 0 {
			fmt.Fprintf(&b, " The user still sees version %d.", a.Version)
		}
	case store.Visual(a.Kind) && !t.cfg.checks():
		fmt.Fprintf(&b, ": saved as version %d, unchecked (no browser on this server can render it).", a.Version)
	default:
		fmt.Fprintf(&b, ": saved as version %d, shown to the user.", a.Version)
	}
	return b.String()
}
