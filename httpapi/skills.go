package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/skill"
	"github.com/quiverhq/quiver/store"
)

// skillUploadBytes caps a skill upload's body: a zip at skill.MaxZipBytes,
// with room for the form around it.
const skillUploadBytes = skill.MaxZipBytes + 1<<20

var errSkillsOff = apiErr(http.StatusNotImplemented, "not_configured", "skills are not available on this server")

// skillUpload reports whether r is a skill upload (POST /api/skills),
// whose body cap is skillUploadBytes rather than the server's.
func skillUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.TrimSuffix(r.URL.Path, "/") == "/api/skills"
}

func (s *server) skillRoutes() {
	tags := []string{"skills"}
	register(s, huma.Operation{
		OperationID: "list-skills", Method: http.MethodGet, Path: "/api/skills", Tags: tags,
		Summary:     "The organisation's skills, by name",
		Description: "Each with its description, how many files it holds and their size (get one skill for SKILL.md and the files).",
		Errors:      []int{http.StatusNotImplemented},
	}, signedIn, s.listSkills)
	register(s, huma.Operation{
		OperationID: "get-skill", Method: http.MethodGet, Path: "/api/skills/{name}", Tags: tags,
		Summary: "One skill with its SKILL.md",
		Errors:  []int{http.StatusNotFound, http.StatusNotImplemented},
	}, signedIn, s.getSkill)
	register(s, huma.Operation{
		OperationID: "add-skill", Method: http.MethodPost, Path: "/api/skills", Tags: tags,
		Summary: "Add a skill from a .zip, or replace the one of its name",
		Description: "A multipart form with one file (field file): a .zip of an Agent Skills folder, SKILL.md at its " +
			"root or in its one folder (whose name must be the skill's). At most 16 MiB; SKILL.md 256 KiB; 100 other " +
			"files, 1 MiB each and 8 MiB together; 200 skills per organisation. A replaced skill keeps its attachments. " +
			"A skill the format or a limit refuses is 422 with the reason, and nothing is stored.",
		MaxBodyBytes: skillUploadBytes + 1,
		Errors:       []int{http.StatusUnprocessableEntity, http.StatusNotImplemented},
	}, adminOnly, s.addSkill)
	register(s, huma.Operation{
		OperationID: "delete-skill", Method: http.MethodDelete, Path: "/api/skills/{name}", Tags: tags,
		Summary:       "Delete a skill, detaching it from every agent",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound, http.StatusNotImplemented},
	}, adminOnly, s.deleteSkill)
	register(s, huma.Operation{
		OperationID: "list-agent-skills", Method: http.MethodGet, Path: "/api/agents/{name}/skills", Tags: tags,
		Summary: "The skills attached to the agent, by name",
		Errors:  []int{http.StatusNotImplemented},
	}, signedIn, s.listAgentSkills)
	register(s, huma.Operation{
		OperationID: "attach-skill", Method: http.MethodPut, Path: "/api/agents/{name}/skills/{skill}", Tags: tags,
		Summary:       "Attach a skill to the agent (listed in its prompt, loaded with load_skill)",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound, http.StatusNotImplemented},
	}, adminOnly, s.attachSkill)
	register(s, huma.Operation{
		OperationID: "detach-skill", Method: http.MethodDelete, Path: "/api/agents/{name}/skills/{skill}", Tags: tags,
		Summary:       "Detach a skill from the agent",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound, http.StatusNotImplemented},
	}, adminOnly, s.detachSkill)
}

// Skill is a skill as the API shows it.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// FileCount and Bytes are how many files the skill holds besides
	// SKILL.md and their size together.
	FileCount int   `json:"file_count"`
	Bytes     int64 `json:"bytes"`
	// Files lists them; only one skill's read (and an upload's answer)
	// gives it.
	Files []SkillFile `json:"files,omitempty"`
	// Document is SKILL.md; only one skill's read gives it.
	Document  string    `json:"document,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Warnings, on an upload's answer only, say what was read
	// differently from how it was written (a description cut to 1,024
	// characters).
	Warnings []string `json:"warnings,omitempty"`
}

// SkillFile is one file of a skill, by path.
type SkillFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

func skillView(sk store.Skill) Skill {
	v := Skill{Name: sk.Name, Description: sk.Description, FileCount: sk.FileCount, Bytes: sk.FileBytes, Document: sk.Document,
		CreatedAt: sk.CreatedAt, UpdatedAt: sk.UpdatedAt}
	for _, f := range sk.Files {
		v.Files = append(v.Files, SkillFile{Path: f.Path, Size: f.Size})
	}
	return v
}

type skillList struct {
	Body struct {
		Skills []Skill `json:"skills"`
	}
}

func skillsView(sks []store.Skill) *skillList {
	out := &skillList{}
	out.Body.Skills = []Skill{}
	for _, sk := range sks {
		out.Body.Skills = append(out.Body.Skills, skillView(sk))
	}
	return out
}

func (s *server) listSkills(ctx context.Context, _ *struct{}) (*skillList, error) {
	if s.skills == nil {
		return nil, errSkillsOff
	}
	sks, err := s.skills.ListSkills(ctx, authFrom(ctx).OrgID)
	if err != nil {
		return nil, err
	}
	return skillsView(sks), nil
}

type skillPath struct {
	Name string `path:"name" doc:"The skill's name."`
}

type skillOutput struct {
	Body Skill
}

func (s *server) getSkill(ctx context.Context, in *skillPath) (*skillOutput, error) {
	if s.skills == nil {
		return nil, errSkillsOff
	}
	sk, err := s.skills.GetSkill(ctx, authFrom(ctx).OrgID, in.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no such skill")
	}
	if err != nil {
		return nil, err
	}
	return &skillOutput{Body: skillView(sk)}, nil
}

type addSkillInput struct {
	RawBody huma.MultipartFormFiles[struct {
		File huma.FormFile `form:"file" required:"true"`
	}]
}

func (s *server) addSkill(ctx context.Context, in *addSkillInput) (*skillOutput, error) {
	if s.skills == nil {
		return nil, errSkillsOff
	}
	f := in.RawBody.Data().File
	b, err := skill.ReadZip(f.File, f.Size)
	if err != nil {
		return nil, skillRefusal(err)
	}
	sk, err := s.skills.PutSkill(ctx, b.Record(authFrom(ctx).OrgID, s.now()))
	if err != nil {
		return nil, skillRefusal(err)
	}
	out := &skillOutput{Body: skillView(sk)}
	out.Body.Warnings = b.Meta.Warnings
	return out, nil
}

// skillRefusal is a skill the format or a limit refuses, as a 422 with
// the reason; any other error as it is.
func skillRefusal(err error) error {
	if errors.Is(err, store.ErrSkillInvalid) || errors.Is(err, store.ErrSkillQuota) {
		return apiErr(http.StatusUnprocessableEntity, "invalid_request", err.Error())
	}
	return err
}

func (s *server) deleteSkill(ctx context.Context, in *skillPath) (*struct{}, error) {
	if s.skills == nil {
		return nil, errSkillsOff
	}
	if err := s.skills.DeleteSkill(ctx, authFrom(ctx).OrgID, in.Name); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound("no such skill")
		}
		return nil, err
	}
	return nil, nil
}

func (s *server) listAgentSkills(ctx context.Context, in *agentPath) (*skillList, error) {
	if s.skills == nil {
		return nil, errSkillsOff
	}
	sks, err := s.skills.AgentSkills(ctx, authFrom(ctx).OrgID, in.Name)
	if err != nil {
		return nil, err
	}
	return skillsView(sks), nil
}

type agentSkillPath struct {
	Name  string `path:"name" doc:"The agent's name."`
	Skill string `path:"skill" doc:"The skill's name."`
}

func (s *server) attachSkill(ctx context.Context, in *agentSkillPath) (*struct{}, error) {
	if s.skills == nil {
		return nil, errSkillsOff
	}
	a := authFrom(ctx)
	if _, err := s.st.GetAgent(ctx, a.OrgID, in.Name); errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no such agent")
	} else if err != nil {
		return nil, err
	}
	if err := s.skills.AttachSkill(ctx, a.OrgID, in.Name, in.Skill, s.now()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound("no such skill")
		}
		return nil, skillRefusal(err)
	}
	return nil, nil
}

func (s *server) detachSkill(ctx context.Context, in *agentSkillPath) (*struct{}, error) {
	if s.skills == nil {
		return nil, errSkillsOff
	}
	if err := s.skills.DetachSkill(ctx, authFrom(ctx).OrgID, in.Name, in.Skill); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound("the skill is not attached to that agent")
		}
		return nil, err
	}
	return nil, nil
}
