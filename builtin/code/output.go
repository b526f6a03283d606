package code

import (
	"fmt"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/sandbox"
)

// File is one file a run wrote to the workspace.
type File struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	// MIME is the file's media type, from its extension when Quiver knows
	// it, else sniffed from its first bytes.
	MIME string `json:"mime"`
}

// Output is run_code's result: what the sandbox reported and the files
// the script wrote, in path order (a file written twice once, at its last
// size).
type Output struct {
	Result sandbox.Result
	Files  []File
	limit  int
}

// ModelText renders the run for the model: what it printed, how it ended
// and the files it wrote with their sizes and types.
func (o *Output) ModelText() string {
	var b strings.Builder
	r := o.Result
	switch {
	case r.Stdout == "":
		b.WriteString("The program printed nothing.\n")
	default:
		b.WriteString("Output:\n")
		b.WriteString(r.Stdout)
		if !strings.HasSuffix(r.Stdout, "\n") {
			b.WriteByte('\n')
		}
		if r.Truncated {
			fmt.Fprintf(&b, "[output cut at %s]\n", size(int64(o.limit)))
		}
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "Error: %s\n", r.Error)
	}
	if r.Stop != sandbox.StopNone {
		fmt.Fprintf(&b, "Stop reason: %s\n", r.Stop)
	}
	if len(o.Files) > 0 {
		b.WriteString("Files written to the workspace:\n")
		for _, f := range o.Files {
			fmt.Fprintf(&b, "- %s (%s, %s)\n", f.Path, size(f.Size), f.MIME)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// recorder is the Workspace a run gets: the turn's confined workspace,
// remembering what was written.
type recorder struct {
	ws      sandbox.Workspace
	written map[string]File
}

func (r *recorder) ReadFile(p string) ([]byte, error) { return r.ws.ReadFile(p) }

func (r *recorder) ListFiles(dir string) ([]string, error) { return r.ws.ListFiles(dir) }

func (r *recorder) WriteFile(p string, data []byte) error {
	if err := r.ws.WriteFile(p, data); err != nil {
		return err
	}
	if r.written == nil {
		r.written = map[string]File{}
	}
	r.written[p] = File{Path: p, Size: int64(len(data)), MIME: mimeType(p, data)}
	return nil
}

// files lists what was written, by path.
func (r *recorder) files() []File {
	out := make([]File, 0, len(r.written))
	for _, f := range r.written {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// knownTypes are the types of the files scripts usually write, fixed here
// so that the result does not depend on the machine's mime tables.
var knownTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".svg": "image/svg+xml", ".webp": "image/webp", ".pdf": "application/pdf",
	".csv": "text/csv", ".tsv": "text/tab-separated-values", ".json": "application/json",
	".md": "text/markdown", ".txt": "text/plain", ".html": "text/html", ".xml": "application/xml",
	".py": "text/x-python", ".js": "text/javascript",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}

// mimeType is p's media type: from its extension when known, else
// sniffed from data.
func mimeType(p string, data []byte) string {
	if t, ok := knownTypes[strings.ToLower(path.Ext(p))]; ok {
		return t
	}
	t, _, err := mime.ParseMediaType(http.DetectContentType(data))
	if err != nil {
		return "application/octet-stream"
	}
	return t
}

// size renders a byte count: "812 bytes", "12.5 KiB", "3.0 MiB".
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
