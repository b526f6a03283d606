package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/quiverhq/quiver/skill"
	"github.com/quiverhq/quiver/store"
)

// SkillsOptions is what "quiver skills add|list|remove|attach|detach"
// run with.
type SkillsOptions struct {
	MCPAdmin
	// Args are the command's operands: a folder or .zip (add), a skill's
	// name (remove), an agent's name and a skill's (attach, detach).
	Args []string
	// Agent, for list, lists the skills attached to that agent only.
	Agent string
	// JSON prints list as JSON.
	JSON bool
}

// skillRefusal makes a skill the store or the reader refuses bad input
// (exit 2), with the reason.
func skillRefusal(err error) error {
	if errors.Is(err, store.ErrSkillInvalid) || errors.Is(err, store.ErrSkillQuota) || errors.Is(err, store.ErrNotFound) {
		return &UsageError{Msg: err.Error()}
	}
	return err
}

// SkillsAdd reads the skill in a folder or .zip (o.Args[0]) and stores it
// in the organisation, replacing the skill of that name (its
// attachments kept). Nothing is stored when any bound is broken.
func SkillsAdd(ctx context.Context, o SkillsOptions, env Env) error {
	env.defaults()
	b, err := skill.ReadPath(o.Args[0])
	if err != nil {
		return skillRefusal(err)
	}
	for _, w := range b.Meta.Warnings {
		fmt.Fprintf(env.Stderr, "quiver: skill %s: %s\n", b.Meta.Name, w)
	}
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	_, existed := rt.st.GetSkill(ctx, org, b.Meta.Name)
	sk, err := rt.st.PutSkill(ctx, b.Record(org, env.Now()))
	if err != nil {
		return skillRefusal(err)
	}
	verb := "added"
	if existed == nil {
		verb = "replaced"
	}
	fmt.Fprintf(env.Stdout, "%s skill %s: %d files, %d bytes besides %s\n", verb, sk.Name, sk.FileCount, sk.FileBytes, store.SkillDocument)
	return nil
}

// skillRow is a skill as list prints it in JSON.
type skillRow struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Files       int    `json:"files"`
	Bytes       int64  `json:"bytes"`
}

// SkillsList prints the organisation's skills, or those attached to
// o.Agent.
func SkillsList(ctx context.Context, o SkillsOptions, env Env) error {
	env.defaults()
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	var sks []store.Skill
	if o.Agent != "" {
		sks, err = rt.st.AgentSkills(ctx, org, o.Agent)
	} else {
		sks, err = rt.st.ListSkills(ctx, org)
	}
	if err != nil {
		return err
	}
	rows := make([]skillRow, len(sks))
	for i, s := range sks {
		rows[i] = skillRow{s.Name, s.Description, s.FileCount, s.FileBytes}
	}
	if o.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stdout, "no skills")
		return nil
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tFILES\tBYTES\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\n", r.Name, r.Files, r.Bytes, cut(r.Description, 70))
	}
	return w.Flush()
}

// cut is s, shortened to n characters with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// SkillsRemove deletes the skill o.Args[0], detaching it from every
// agent.
func SkillsRemove(ctx context.Context, o SkillsOptions, env Env) error {
	return skillsChange(ctx, o, env, func(st store.Skills, org string) (string, error) {
		return "removed skill " + o.Args[0], st.DeleteSkill(ctx, org, o.Args[0])
	})
}

// SkillsAttach attaches the skill o.Args[1] to the agent o.Args[0].
func SkillsAttach(ctx context.Context, o SkillsOptions, env Env) error {
	return skillsChange(ctx, o, env, func(st store.Skills, org string) (string, error) {
		return fmt.Sprintf("attached skill %s to agent %s", o.Args[1], o.Args[0]), st.AttachSkill(ctx, org, o.Args[0], o.Args[1], env.Now())
	})
}

// SkillsDetach detaches the skill o.Args[1] from the agent o.Args[0].
func SkillsDetach(ctx context.Context, o SkillsOptions, env Env) error {
	return skillsChange(ctx, o, env, func(st store.Skills, org string) (string, error) {
		return fmt.Sprintf("detached skill %s from agent %s", o.Args[1], o.Args[0]), st.DetachSkill(ctx, org, o.Args[0], o.Args[1])
	})
}

// skillsChange opens the runtime, runs change and prints what it says.
func skillsChange(ctx context.Context, o SkillsOptions, env Env, change func(store.Skills, string) (string, error)) error {
	env.defaults()
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	msg, err := change(rt.st, org)
	if err != nil {
		return skillRefusal(err)
	}
	fmt.Fprintln(env.Stdout, msg)
	return nil
}
