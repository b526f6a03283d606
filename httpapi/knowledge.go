package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/knowledge"
	"github.com/quiverhq/quiver/store"
)

// Knowledge is what the knowledge endpoints need: the agent's documents
// (store.Knowledge's reads and delete) and adding files
// (knowledge.Index).
type Knowledge interface {
	Add(ctx context.Context, orgID, agent string, f knowledge.File, progress knowledge.Progress) (store.KnowledgeDocument, error)
	ListKnowledgeDocuments(ctx context.Context, orgID, agent string) ([]store.KnowledgeDocument, error)
	DeleteKnowledgeDocument(ctx context.Context, orgID, agent, id string) error
}

// knowledgeUploadBytes caps an upload's body: one file at the largest
// size knowledge takes, with room for the form around it.
const knowledgeUploadBytes = store.MaxKnowledgeFileBytes + 1<<20

var errKnowledgeOff = apiErr(http.StatusNotImplemented, "not_configured", "knowledge is not available on this server")

// knowledgeUpload reports whether r is a knowledge upload, whose body cap
// is knowledgeUploadBytes rather than the server's.
func knowledgeUpload(r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/agents/")
	return ok && r.Method == http.MethodPost && strings.HasSuffix(rest, "/knowledge") && strings.Count(rest, "/") == 1
}

func (s *server) knowledgeRoutes() {
	tags := []string{"knowledge"}
	register(s, huma.Operation{
		OperationID: "list-knowledge", Method: http.MethodGet, Path: "/api/agents/{name}/knowledge", Tags: tags,
		Summary: "The agent's knowledge documents, oldest first",
		Description: "Each with its status: indexing (chunks of total is the progress), ready (searched by " +
			"search_knowledge) or failed (reason says why; no chunk is kept).",
		Errors: []int{http.StatusNotImplemented},
	}, signedIn, s.listKnowledge)
	register(s, huma.Operation{
		OperationID: "add-knowledge", Method: http.MethodPost, Path: "/api/agents/{name}/knowledge", Tags: tags,
		Summary: "Add files to the agent's knowledge",
		Description: "A multipart form of one or more files (field files): UTF-8 text, DOCX or PDF, at most 25 MiB each " +
			"and 26 MiB per request. Each is indexed before the answer; one that cannot be read is returned failed with " +
			"its reason and the others are still added. 1,000 documents per agent, 6,000 chunks per document.",
		MaxBodyBytes: knowledgeUploadBytes + 1,
		Errors:       []int{http.StatusUnprocessableEntity, http.StatusNotImplemented},
	}, adminOnly, s.addKnowledge)
	register(s, huma.Operation{
		OperationID: "delete-knowledge", Method: http.MethodDelete, Path: "/api/agents/{name}/knowledge/{id}", Tags: tags,
		Summary:       "Delete a knowledge document with its chunks",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound, http.StatusNotImplemented},
	}, adminOnly, s.deleteKnowledge)
}

// KnowledgeDocument is a document as the API shows it.
type KnowledgeDocument struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	MediaType string    `json:"media_type"`
	Size      int64     `json:"size"`
	Status    string    `json:"status" enum:"indexing,ready,failed"`
	Reason    string    `json:"reason,omitempty"`
	Chunks    int       `json:"chunks"`
	Total     int       `json:"total"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func knowledgeView(d store.KnowledgeDocument) KnowledgeDocument {
	return KnowledgeDocument{ID: d.ID, Name: d.Name, MediaType: d.MediaType, Size: d.Size, Status: string(d.Status),
		Reason: d.Reason, Chunks: d.Chunks, Total: d.Total, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

type knowledgeList struct {
	Body struct {
		Documents []KnowledgeDocument `json:"documents"`
	}
}

func (s *server) listKnowledge(ctx context.Context, in *agentPath) (*knowledgeList, error) {
	if s.knowledge == nil {
		return nil, errKnowledgeOff
	}
	ds, err := s.knowledge.ListKnowledgeDocuments(ctx, authFrom(ctx).OrgID, in.Name)
	if err != nil {
		return nil, err
	}
	out := &knowledgeList{}
	out.Body.Documents = []KnowledgeDocument{}
	for _, d := range ds {
		out.Body.Documents = append(out.Body.Documents, knowledgeView(d))
	}
	return out, nil
}

type addKnowledgeInput struct {
	Name    string `path:"name"`
	RawBody huma.MultipartFormFiles[struct {
		Files []huma.FormFile `form:"files" required:"true"`
	}]
}

func (s *server) addKnowledge(ctx context.Context, in *addKnowledgeInput) (*knowledgeList, error) {
	if s.knowledge == nil {
		return nil, errKnowledgeOff
	}
	a := authFrom(ctx)
	if _, err := s.st.GetAgent(ctx, a.OrgID, in.Name); errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no such agent")
	} else if err != nil {
		return nil, err
	}
	out := &knowledgeList{}
	out.Body.Documents = []KnowledgeDocument{}
	for _, f := range in.RawBody.Data().Files {
		data, err := io.ReadAll(io.LimitReader(f.File, store.MaxKnowledgeFileBytes+1))
		if err != nil {
			return nil, err
		}
		d, err := s.knowledge.Add(ctx, a.OrgID, in.Name, knowledge.File{Name: f.Filename, MediaType: f.ContentType, Data: data}, nil)
		switch {
		case errors.Is(err, store.ErrKnowledgeQuota), errors.Is(err, store.ErrKnowledgeInvalid):
			return nil, apiErr(http.StatusUnprocessableEntity, "invalid_request", err.Error())
		case err != nil:
			return nil, err
		}
		out.Body.Documents = append(out.Body.Documents, knowledgeView(d))
	}
	return out, nil
}

type knowledgePath struct {
	Name string `path:"name"`
	ID   string `path:"id"`
}

func (s *server) deleteKnowledge(ctx context.Context, in *knowledgePath) (*struct{}, error) {
	if s.knowledge == nil {
		return nil, errKnowledgeOff
	}
	if err := s.knowledge.DeleteKnowledgeDocument(ctx, authFrom(ctx).OrgID, in.Name, in.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound("no such document")
		}
		return nil, err
	}
	return nil, nil
}
