package httpapi

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/store"
)

// artifactsPath is the route of a conversation's artifacts.
const artifactsPath = "/api/conversations/{id}/artifacts"

// artifactCSP is sent with an artifact's content: an HTML or SVG artifact
// shown in the web chat's panel (an iframe with sandbox="allow-scripts")
// or opened on its own runs in an opaque origin, with its own inline
// scripts and styles and data: URLs only: it reaches neither Quiver's
// pages, cookies and API nor the network.
const artifactCSP = "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
	"img-src data:; font-src data:; media-src data:; form-action 'none'; frame-ancestors 'self'; base-uri 'none'"

// artifactTypes are the media types an artifact's content is served as.
var artifactTypes = map[string]string{
	store.ArtifactMarkdown: "text/markdown; charset=utf-8", store.ArtifactHTML: "text/html; charset=utf-8",
	store.ArtifactSVG: "image/svg+xml", store.ArtifactCSV: "text/csv; charset=utf-8",
	store.ArtifactCode: "text/plain; charset=utf-8", store.ArtifactMermaid: "text/plain; charset=utf-8",
}

// artifactExtensions name a downloaded artifact's file.
var artifactExtensions = map[string]string{
	store.ArtifactMarkdown: ".md", store.ArtifactHTML: ".html", store.ArtifactSVG: ".svg", store.ArtifactCSV: ".csv",
	store.ArtifactCode: ".txt", store.ArtifactMermaid: ".mmd",
}

func (s *server) artifactRoutes() {
	tags := []string{"artifacts"}
	register(s, huma.Operation{
		OperationID: "list-artifacts", Method: http.MethodGet, Path: artifactsPath, Tags: tags,
		Summary: "The artifacts of one of the caller's conversations, oldest first, without their content",
		Errors:  []int{http.StatusNotFound},
	}, signedIn, s.listArtifacts)
	register(s, huma.Operation{
		OperationID: "get-artifact", Method: http.MethodGet, Path: artifactsPath + "/{artifact}", Tags: tags,
		Summary: "An artifact with its newest saved version's content and its version history",
		Description: "An HTML or SVG artifact's draft (a change the agent has not checked and saved yet) is " +
			"described by `draft` without its content: the person sees saved versions only.",
		Errors: []int{http.StatusNotFound},
	}, signedIn, s.getArtifact)
	register(s, huma.Operation{
		OperationID: "get-artifact-version", Method: http.MethodGet, Path: artifactsPath + "/{artifact}/versions/{version}", Tags: tags,
		Summary: "One saved version of an artifact, with its content",
		Errors:  []int{http.StatusNotFound},
	}, signedIn, s.getArtifactVersion)
	register(s, huma.Operation{
		OperationID: "artifact-content", Method: http.MethodGet, Path: artifactsPath + "/{artifact}/content", Tags: tags,
		Summary: "An artifact's content as a document: what the web chat's panel frames, and the download",
		Description: "The newest saved version, or `version`; `download=true` serves it as an attachment named " +
			"after the title. Every response carries a sandboxing Content-Security-Policy (an opaque origin, " +
			"inline scripts and styles and data: URLs only, nothing loaded), so an HTML artifact runs as it does " +
			"in the agent's checks and never as Quiver's own page.",
		Errors: []int{http.StatusNotFound},
	}, signedIn, s.artifactContent)
	register(s, huma.Operation{
		OperationID: "delete-artifact", Method: http.MethodDelete, Path: artifactsPath + "/{artifact}", Tags: tags,
		Summary: "Delete an artifact with all its versions",
		Errors:  []int{http.StatusNotFound}, DefaultStatus: http.StatusNoContent,
	}, signedIn, s.deleteArtifact)
}

// Artifact is an artifact as the API shows it.
type Artifact struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Kind     string `json:"kind" enum:"markdown,html,svg,csv,code,mermaid"`
	Language string `json:"language,omitempty" doc:"A code artifact's language."`
	// Version is 0 while the artifact has only its first draft.
	Version   int            `json:"version" doc:"The newest saved version, from 1; 0 while only a first draft exists."`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	Draft     *ArtifactDraft `json:"draft,omitempty" doc:"A change the agent has not checked and saved yet."`
	Content   *string        `json:"content,omitempty" doc:"The newest saved version's content (get-artifact only)."`
	Versions  []ArtifactVer  `json:"versions,omitempty" doc:"The saved versions, oldest first (get-artifact only)."`
}

// ArtifactDraft describes a pending draft.
type ArtifactDraft struct {
	Rev       int       `json:"rev"`
	Inspected bool      `json:"inspected" doc:"Whether the agent inspected the draft since its last change."`
	UpdatedAt time.Time `json:"updated_at"`
}

// ArtifactVer is one saved version.
type ArtifactVer struct {
	Version   int       `json:"version"`
	Title     string    `json:"title"`
	Change    string    `json:"change" enum:"create,rewrite,update"`
	Patch     string    `json:"patch,omitempty" doc:"An update's edits as the agent gave them (JSON)."`
	Size      int       `json:"size" doc:"The content's length in bytes."`
	Checked   bool      `json:"checked" doc:"An HTML or SVG version saved after a browser check."`
	CreatedAt time.Time `json:"created_at"`
	Content   *string   `json:"content,omitempty"`
}

func artifactView(a store.Artifact) Artifact {
	v := Artifact{ID: a.ID, Title: a.Title, Kind: a.Kind, Language: a.Language, Version: a.Version,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	if d := a.Draft; d != nil {
		v.Draft = &ArtifactDraft{Rev: d.Rev, Inspected: d.Inspected(), UpdatedAt: d.UpdatedAt}
	}
	return v
}

func versionView(v store.ArtifactVersion) ArtifactVer {
	return ArtifactVer{Version: v.Version, Title: v.Title, Change: v.Change, Patch: v.Patch, Size: v.Size,
		Checked: v.Checked, CreatedAt: v.CreatedAt}
}

type artifactPath struct {
	ID       string `path:"id" doc:"The conversation's id."`
	Artifact string `path:"artifact" maxLength:"200" doc:"The artifact's id (art_…)."`
}

type artifactsOutput struct {
	Body struct {
		Artifacts []Artifact `json:"artifacts"`
	}
}

func (s *server) listArtifacts(ctx context.Context, in *conversationPath) (*artifactsOutput, error) {
	a := authFrom(ctx)
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	list, err := s.st.ListArtifacts(ctx, a.OrgID, in.ID)
	if err != nil {
		return nil, err
	}
	out := &artifactsOutput{}
	out.Body.Artifacts = make([]Artifact, 0, len(list))
	for _, art := range list {
		out.Body.Artifacts = append(out.Body.Artifacts, artifactView(art))
	}
	return out, nil
}

var errNoArtifact = notFound("no such artifact in this conversation")

// ownArtifact returns the artifact of the caller's conversation, or the
// API's not-found error for a conversation or artifact that is not theirs.
func (s *server) ownArtifact(ctx context.Context, a *auth, conversationID, id string) (store.Artifact, error) {
	if _, err := s.ownConversation(ctx, a, conversationID); err != nil {
		return store.Artifact{}, err
	}
	art, err := s.st.GetArtifact(ctx, a.OrgID, conversationID, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Artifact{}, errNoArtifact
	}
	return art, err
}

type artifactOutput struct{ Body Artifact }

func (s *server) getArtifact(ctx context.Context, in *artifactPath) (*artifactOutput, error) {
	a := authFrom(ctx)
	art, err := s.ownArtifact(ctx, a, in.ID, in.Artifact)
	if err != nil {
		return nil, err
	}
	vs, err := s.st.ListArtifactVersions(ctx, a.OrgID, in.ID, in.Artifact)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	v := artifactView(art)
	if art.Version > 0 {
		v.Content = &art.Content
	}
	v.Versions = make([]ArtifactVer, 0, len(vs))
	for _, ver := range vs {
		v.Versions = append(v.Versions, versionView(ver))
	}
	return &artifactOutput{Body: v}, nil
}

type artifactVersionPath struct {
	ID       string `path:"id" doc:"The conversation's id."`
	Artifact string `path:"artifact" maxLength:"200" doc:"The artifact's id (art_…)."`
	Version  int    `path:"version" minimum:"1" maximum:"100" doc:"The version, from 1."`
}

type artifactVersionOutput struct{ Body ArtifactVer }

func (s *server) getArtifactVersion(ctx context.Context, in *artifactVersionPath) (*artifactVersionOutput, error) {
	a := authFrom(ctx)
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	ver, err := s.st.GetArtifactVersion(ctx, a.OrgID, in.ID, in.Artifact, in.Version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no such version of this artifact")
	}
	if err != nil {
		return nil, err
	}
	v := versionView(ver)
	v.Content = &ver.Content
	return &artifactVersionOutput{Body: v}, nil
}

type artifactContentInput struct {
	ID       string `path:"id" doc:"The conversation's id."`
	Artifact string `path:"artifact" maxLength:"200" doc:"The artifact's id (art_…)."`
	Version  int    `query:"version" minimum:"0" maximum:"100" doc:"A saved version; 0 or absent means the newest."`
	Download bool   `query:"download" doc:"Serve it as an attachment named after the title."`
}

type artifactContentOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	CSP                string `header:"Content-Security-Policy"`
	NoSniff            string `header:"X-Content-Type-Options"`
	Body               []byte
}

func (s *server) artifactContent(ctx context.Context, in *artifactContentInput) (*artifactContentOutput, error) {
	a := authFrom(ctx)
	art, err := s.ownArtifact(ctx, a, in.ID, in.Artifact)
	if err != nil {
		return nil, err
	}
	content, title := art.Content, art.Title
	switch {
	case in.Version > 0:
		ver, err := s.st.GetArtifactVersion(ctx, a.OrgID, in.ID, in.Artifact, in.Version)
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound("no such version of this artifact")
		}
		if err != nil {
			return nil, err
		}
		content, title = ver.Content, ver.Title
	case art.Version == 0:
		return nil, notFound("this artifact has no saved version yet")
	}
	disposition := "inline"
	if in.Download {
		disposition = "attachment"
	}
	return &artifactContentOutput{ContentType: artifactTypes[art.Kind], CSP: artifactCSP, NoSniff: "nosniff",
		ContentDisposition: mime.FormatMediaType(disposition, map[string]string{"filename": fileName(title) + artifactExtensions[art.Kind]}),
		Body:               []byte(content)}, nil
}

// fileName is a title as a file name: its letters, digits and a few
// marks, the rest as hyphens; "artifact" when nothing is left.
func fileName(title string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r == ':' || r < 0x20 || r == 0x7f || strings.ContainsRune(`"*?<>|`, r):
			return '-'
		}
		return r
	}, strings.TrimSpace(title))
	if len(name) > 100 {
		name = name[:100]
		name = strings.ToValidUTF8(name, "")
	}
	if strings.Trim(name, "-. ") == "" {
		return "artifact"
	}
	return name
}

func (s *server) deleteArtifact(ctx context.Context, in *artifactPath) (*struct{}, error) {
	a := authFrom(ctx)
	if _, err := s.ownConversation(ctx, a, in.ID); err != nil {
		return nil, err
	}
	err := s.st.DeleteArtifact(ctx, a.OrgID, in.ID, in.Artifact)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoArtifact
	}
	return nil, err
}
