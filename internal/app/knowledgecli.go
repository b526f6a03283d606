package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/quiverhq/quiver/knowledge"
	"github.com/quiverhq/quiver/store"
)

// KnowledgeOptions is what "quiver knowledge add|list|remove|reindex"
// run with.
type KnowledgeOptions struct {
	MCPAdmin
	// Agent names the agent the documents belong to; required.
	Agent string
	// Files are the files to add (add) or the document IDs or names to
	// remove (remove).
	Files []string
	// JSON prints list as JSON.
	JSON bool
}

func (o KnowledgeOptions) check(cmd string) error {
	if o.Agent == "" {
		return usagef("knowledge %s: --agent is required", cmd)
	}
	return nil
}

// start checks o for cmd and opens the runtime and the organisation it
// works on; the caller closes the runtime.
func (o KnowledgeOptions) start(ctx context.Context, cmd string, env Env) (*runtime, string, error) {
	if err := o.check(cmd); err != nil {
		return nil, "", err
	}
	return o.open(ctx, env)
}

// KnowledgeAdd adds each file to the agent's knowledge and indexes it,
// printing progress. A file that fails is reported with its reason and
// the others are still added; the error then says how many failed.
func KnowledgeAdd(ctx context.Context, o KnowledgeOptions, env Env) error {
	env.defaults()
	rt, org, err := o.start(ctx, "add", env)
	if err != nil {
		return err
	}
	defer rt.close()
	failed := 0
	for _, path := range o.Files {
		if err := addFile(ctx, rt.knowledge, org, o.Agent, path, env); err != nil {
			failed++
			fmt.Fprintf(env.Stdout, "%s: failed: %v\n", filepath.Base(path), err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("knowledge add: %d of %d files failed", failed, len(o.Files))
	}
	return nil
}

// addFile reads and adds one file, refusing one over the size limit
// before reading it.
func addFile(ctx context.Context, x *knowledge.Index, org, agent, path string, env Env) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Size() > store.MaxKnowledgeFileBytes {
		return fmt.Errorf("%d bytes; the limit is %d (25 MiB)", fi.Size(), store.MaxKnowledgeFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	name := filepath.Base(path)
	mt := mime.TypeByExtension(filepath.Ext(name))
	d, err := x.Add(ctx, org, agent, knowledge.File{Name: name, MediaType: mt, Data: data}, func(d store.KnowledgeDocument) {
		if d.Status == store.KnowledgeIndexing && d.Total > 0 {
			fmt.Fprintf(env.Stdout, "%s: indexing %d/%d chunks\n", name, d.Chunks, d.Total)
		}
	})
	if err != nil {
		return err
	}
	if d.Status == store.KnowledgeFailed {
		return errors.New(d.Reason)
	}
	fmt.Fprintf(env.Stdout, "%s: ready, %d chunks (%s)\n", name, d.Chunks, d.ID)
	return nil
}

// knowledgeRow is a document as list prints it in JSON.
type knowledgeRow struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Chunks int    `json:"chunks"`
	Total  int    `json:"total"`
}

// KnowledgeList prints the agent's documents with their status.
func KnowledgeList(ctx context.Context, o KnowledgeOptions, env Env) error {
	env.defaults()
	rt, org, err := o.start(ctx, "list", env)
	if err != nil {
		return err
	}
	defer rt.close()
	ds, err := rt.st.ListKnowledgeDocuments(ctx, org, o.Agent)
	if err != nil {
		return err
	}
	rows := make([]knowledgeRow, len(ds))
	for i, d := range ds {
		rows[i] = knowledgeRow{d.ID, d.Name, d.Size, string(d.Status), d.Reason, d.Chunks, d.Total}
	}
	if o.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(env.Stdout, "agent %q has no knowledge\n", o.Agent)
		return nil
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tSIZE\tSTATUS\tCHUNKS")
	for _, r := range rows {
		status := r.Status
		if r.Reason != "" {
			status += ": " + r.Reason
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%d/%d\n", r.ID, r.Name, r.Size, status, r.Chunks, r.Total)
	}
	return w.Flush()
}

// KnowledgeRemove deletes the documents named by ID or file name.
func KnowledgeRemove(ctx context.Context, o KnowledgeOptions, env Env) error {
	env.defaults()
	rt, org, err := o.start(ctx, "remove", env)
	if err != nil {
		return err
	}
	defer rt.close()
	ds, err := rt.st.ListKnowledgeDocuments(ctx, org, o.Agent)
	if err != nil {
		return err
	}
	for _, want := range o.Files {
		n := 0
		for _, d := range ds {
			if d.ID == want || d.Name == want {
				if err := rt.st.DeleteKnowledgeDocument(ctx, org, o.Agent, d.ID); err != nil {
					return err
				}
				n++
			}
		}
		if n == 0 {
			return fmt.Errorf("knowledge remove: agent %q has no document %q", o.Agent, want)
		}
		fmt.Fprintf(env.Stdout, "removed %s\n", want)
	}
	return nil
}

// KnowledgeReindex embeds the agent's chunks again with the current
// embedding model.
func KnowledgeReindex(ctx context.Context, o KnowledgeOptions, env Env) error {
	env.defaults()
	rt, org, err := o.start(ctx, "reindex", env)
	if err != nil {
		return err
	}
	defer rt.close()
	n, err := rt.knowledge.Reindex(ctx, org, o.Agent)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "re-embedded %d chunks\n", n)
	return nil
}

// apiKnowledge is httpapi.Knowledge: adding through the index, reading
// and deleting through the store.
type apiKnowledge struct {
	*knowledge.Index
	store.Knowledge
}
