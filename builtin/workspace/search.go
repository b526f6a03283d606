package workspace

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/tool"
)

//go:embed search_files.md
var searchDescription string

type searchIn struct {
	Queries         []string `json:"queries" jsonschema:"literal strings; a line matches if it contains any"`
	CaseInsensitive bool     `json:"case_insensitive,omitempty"`
	Context         int      `json:"context,omitempty" jsonschema:"lines to show before and after each match"`
	Folder          string   `json:"folder,omitempty" jsonschema:"search only this folder"`
	Glob            string   `json:"glob,omitempty" jsonschema:"only files matching this pattern, e.g. *.go or src/*.ts"`
}

func (w *workspaces) searchTool() *tool.Tool {
	s := spec("search_files", searchDescription, tool.Read,
		tool.Limit{Name: "max_queries", Value: maxQueries},
		tool.Limit{Name: "max_context", Value: maxContext},
		tool.Limit{Name: "max_matching_lines", Value: maxSearchLines},
		tool.Limit{Name: "max_output_chars", Value: maxOutputChars})
	s.Tune = func(sc *jsonschema.Schema) {
		q := sc.Properties["queries"]
		q.MinItems, q.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(maxQueries)
		c := sc.Properties["context"]
		c.Minimum, c.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(maxContext))
	}
	return tool.New(s, w.search)
}

func (w *workspaces) search(ctx context.Context, s tool.Scope, in searchIn) (string, error) {
	if err := checkSearch(in); err != nil {
		return "", fmt.Errorf("search_files: %w", err)
	}
	root, err := w.open(s)
	if err != nil {
		return "", err
	}
	defer root.Close()
	folder, err := openFolder(root, in.Folder)
	if err != nil {
		return "", fmt.Errorf("search_files: %w", err)
	}
	sc := &scanner{
		root:     root,
		m:        newMatcher(in.Queries, in.CaseInsensitive),
		context:  in.Context,
		maxBytes: w.cfg.MaxFileBytes,
		limit:    maxSearchLines,
	}
	res, err := sc.run(ctx, folder, in.Glob)
	if err != nil {
		return "", err
	}
	return res.render(in, folder, w.cfg.MaxFileBytes), nil
}

// checkSearch checks what the schema cannot: each string is non-empty and
// on one line, the context is in range, the glob is well formed.
func checkSearch(in searchIn) error {
	if n := len(in.Queries); n < 1 || n > maxQueries {
		return fmt.Errorf("got %d search strings; give 1 to %d", n, maxQueries)
	}
	for i, q := range in.Queries {
		switch {
		case q == "":
			return fmt.Errorf("search string %d is empty", i+1)
		case strings.ContainsAny(q, "\r\n"):
			return fmt.Errorf("search string %d spans lines; lines are matched one at a time", i+1)
		}
	}
	if in.Context < 0 || in.Context > maxContext {
		return fmt.Errorf("context is %d; it must be 0 to %d", in.Context, maxContext)
	}
	if _, err := path.Match(in.Glob, ""); err != nil {
		return fmt.Errorf("glob %q is not a valid pattern", in.Glob)
	}
	return nil
}

// globMatch reports whether the file at p (relative to the workspace)
// passes the glob: matched against the file name, or against the whole path
// when the glob has a slash. An empty glob passes everything.
func globMatch(glob, p string) bool {
	if glob == "" {
		return true
	}
	name := path.Base(p)
	if strings.Contains(glob, "/") {
		name = p
	}
	ok, _ := path.Match(glob, name)
	return ok
}

// render writes the results grep style: a file's path, then "12:text" for a
// matching line and "13-text" for context, "--" between distant groups, a
// blank line between files. It stops at the match limit or the output budget
// and says so.
func (r *scanResult) render(in searchIn, folder string, maxBytes int64) string {
	var blocks, notes []string
	size, shown, cut := 0, 0, r.more
	for _, f := range r.files {
		if shown >= r.limit {
			break
		}
		block, n := f.block(r.limit - shown)
		if size+len(block)+2 > maxOutputChars {
			cut = true
			break
		}
		blocks = append(blocks, block)
		size += len(block) + 2
		shown += n
		cut = cut || n < f.matches
	}
	if shown == 0 && !cut {
		blocks = append(blocks, noMatches(in, folder))
	}
	if cut {
		notes = append(notes, fmt.Sprintf("[showing %d matching lines; more were cut: narrow the search with folder, glob or a longer string]", shown))
	}
	if r.skipped > 0 {
		notes = append(notes, fmt.Sprintf("[skipped %d files over %d bytes]", r.skipped, maxBytes))
	}
	if r.deep > 0 {
		notes = append(notes, fmt.Sprintf("[skipped %d folders nested more than %d levels deep]", r.deep, maxDepth))
	}
	return strings.Join(append([]string{strings.Join(blocks, "\n\n")}, notes...), "\n")
}

// block renders one file's lines, stopping before match number limit+1.
func (f *fileResult) block(limit int) (string, int) {
	var b strings.Builder
	b.WriteString(f.path)
	n := 0
	for _, l := range f.lines {
		if l.match && n == limit {
			break
		}
		if l.gap {
			b.WriteString("\n--")
		}
		sep := "-"
		if l.match {
			sep = ":"
			n++
		}
		b.WriteString("\n" + strconv.Itoa(l.num) + sep + l.text)
	}
	return b.String(), n
}

func noMatches(in searchIn, folder string) string {
	qs := make([]string, len(in.Queries))
	for i, q := range in.Queries {
		qs[i] = strconv.Quote(q)
	}
	where := ""
	if folder != "." {
		where = " in " + folder
	}
	if in.Glob != "" {
		where += " among files matching " + in.Glob
	}
	return fmt.Sprintf("No matches for %s%s.", strings.Join(qs, " or "), where)
}
