package httpapi

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/builtin/workspace"
)

// workspaceFilePath is the route of one file of the caller's workspace.
const workspaceFilePath = "/api/workspace/file"

// inlineTypes are the media types a workspace file is shown in the page
// as (an <img> of a chart run_code saved); every other file is served as
// a download. SVG is among them: an <img> runs none of its scripts, and
// opened on its own it gets the sandboxing CSP every workspace file gets.
var inlineTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".svg": "image/svg+xml",
}

// workspaceCSP is sent with every workspace file: a document opened from
// the workspace (an SVG, an HTML file a script wrote) runs sandboxed, with
// no script, no origin and nothing loaded.
const workspaceCSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'"

func (s *server) workspaceRoutes() {
	register(s, huma.Operation{
		OperationID: "read-workspace-file", Method: http.MethodGet, Path: workspaceFilePath, Tags: []string{"workspace"},
		Summary: "A file of the caller's own workspace, byte for byte",
		Description: "The workspace is the one the workspace tools and run_code read and write for the signed-in " +
			"person; no request reaches another person's. Images (PNG, JPEG, GIF, WebP, SVG) are served inline so " +
			"the web chat can show a chart a script saved; every other file as an attachment. Every response carries " +
			"a sandboxing Content-Security-Policy. The workspace tools' path rules apply: a relative path inside the " +
			"workspace, links followed only inside it, regular files only, at most the per-file quota (404 otherwise).",
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusNotImplemented},
	}, signedIn, s.readWorkspaceFile)
}

type workspaceFileInput struct {
	Path string `query:"path" required:"true" maxLength:"1024" doc:"The file's path inside the workspace, like charts/sales.png."`
}

type workspaceFileOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	CSP                string `header:"Content-Security-Policy"`
	Body               []byte
}

func (s *server) readWorkspaceFile(ctx context.Context, in *workspaceFileInput) (*workspaceFileOutput, error) {
	a := authFrom(ctx)
	if s.workspaces == "" {
		return nil, apiErr(http.StatusNotImplemented, "not_configured", "workspaces are not available on this server")
	}
	data, err := workspace.ReadPersonFile(ctx, s.workspaces, a.OrgID, a.UserID, in.Path)
	if err != nil {
		// A path the rules refuse, or a file over the quota, reads as
		// not found too: the page has nothing to show either way.
		if !errors.Is(err, workspace.ErrNoFile) {
			s.log.Debug("httpapi: workspace file refused", "err", err)
		}
		return nil, notFound("no such file in your workspace")
	}
	name := path.Base(in.Path)
	disposition, typ := "attachment", "application/octet-stream"
	if t, ok := inlineTypes[strings.ToLower(path.Ext(name))]; ok {
		disposition, typ = "inline", t
	}
	return &workspaceFileOutput{ContentType: typ, CSP: workspaceCSP,
		ContentDisposition: mime.FormatMediaType(disposition, map[string]string{"filename": name}), Body: data}, nil
}
