package storetest

import (
	"context"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// accountWrites are the Accounts and Agents records of the cancelled
// context check. The new ones a cancelled write must not store; the held
// ones are stored beforehand, and a cancelled update, consume or delete
// must leave them as they are.
type accountWrites struct {
	org   store.Org
	user  store.User       // in heldOrg
	first store.Credential // user's first, given to CreateUser
	cred  store.Credential
	agent store.StoredAgent

	heldOrg   store.Org
	heldUser  store.User
	heldCred  store.Credential // expires at(40): DeleteExpiredCredentials at(59) would remove it
	heldAgent store.StoredAgent
}

// newAccountWrites stores the held records in org and returns them with
// new ones.
func (f *fixture) newAccountWrites(t *testing.T, org string) accountWrites {
	t.Helper()
	w := accountWrites{
		org:       f.newOrg("new-org"),
		cred:      f.newCredential(store.CredSession, f.id(org), "held", "new"),
		agent:     f.newAgent(org, "new"),
		heldOrg:   f.newOrg(org),
		heldCred:  f.newCredential(store.CredLoginLink, f.id(org), "held", "held"),
		heldAgent: f.newAgent(org, "held"),
	}
	w.user, w.heldUser = newUser(w.heldOrg.ID, "new"), newUser(w.heldOrg.ID, "held")
	w.first = f.newCredential(store.CredLoginLink, w.heldOrg.ID, w.user.ID, "first")
	f.createOrgs(t, w.heldOrg)
	f.createUsers(t, w.heldUser)
	f.putCredentials(t, w.heldCred)
	f.putAgents(t, w.heldAgent)
	return w
}

// accountCalls returns a call of every Accounts method on w's records.
func accountCalls(f *fixture, w accountWrites) []call {
	org, u, c := w.heldOrg.ID, w.heldUser, w.heldCred
	change := func(u *store.User) error {
		u.DisplayName, u.Role = "Changed", store.RoleAdmin
		return nil
	}
	return []call{
		{"CreateOrg", func(ctx context.Context) error { return f.CreateOrg(ctx, w.org) }},
		{"GetOrg", func(ctx context.Context) error { _, err := f.GetOrg(ctx, org); return err }},
		{"CountOrgs", func(ctx context.Context) error { _, err := f.CountOrgs(ctx); return err }},
		{"CreateUser", func(ctx context.Context) error { return f.CreateUser(ctx, w.user) }},
		{"CreateUserWithCredential", func(ctx context.Context) error { return f.CreateUser(ctx, w.user, w.first) }},
		{"GetUser", func(ctx context.Context) error { _, err := f.GetUser(ctx, org, u.ID); return err }},
		{"ListUsers", func(ctx context.Context) error { _, err := f.ListUsers(ctx, org); return err }},
		{"ModifyUser", func(ctx context.Context) error {
			_, err := f.ModifyUser(ctx, org, u.ID, at(50), change)
			return err
		}},
		{"DisableUser", func(ctx context.Context) error { return f.DisableUser(ctx, org, u.ID, at(50)) }},
		{"EnableUser", func(ctx context.Context) error { return f.EnableUser(ctx, org, u.ID, at(50)) }},
		{"PutCredential", func(ctx context.Context) error { return f.PutCredential(ctx, w.cred) }},
		{"LookupCredential", func(ctx context.Context) error {
			_, err := f.LookupCredential(ctx, c.Kind, c.Hash, at(20))
			return err
		}},
		{"ConsumeCredential", func(ctx context.Context) error {
			_, err := f.ConsumeCredential(ctx, c.Kind, c.Hash, at(20))
			return err
		}},
		{"DeleteCredential", func(ctx context.Context) error { return f.DeleteCredential(ctx, c.Kind, c.Hash) }},
		{"ListCredentials", func(ctx context.Context) error {
			_, err := f.ListCredentials(ctx, c.OrgID, c.UserID, c.Kind)
			return err
		}},
		{"DeleteExpiredCredentials", func(ctx context.Context) error {
			_, err := f.DeleteExpiredCredentials(ctx, at(59))
			return err
		}},
	}
}

// agentCalls returns a call of every Agents method on w's records;
// PutAgent twice, inserting and replacing.
func agentCalls(f *fixture, w accountWrites) []call {
	a := w.heldAgent
	replaced := a
	replaced.Definition, replaced.UpdatedAt = []byte("name: changed\n"), at(50)
	return []call{
		{"PutAgent", func(ctx context.Context) error { return f.PutAgent(ctx, w.agent) }},
		{"PutAgentReplace", func(ctx context.Context) error { return f.PutAgent(ctx, replaced) }},
		{"GetAgent", func(ctx context.Context) error { _, err := f.GetAgent(ctx, a.OrgID, a.Name); return err }},
		{"ListAgents", func(ctx context.Context) error { _, err := f.ListAgents(ctx, a.OrgID); return err }},
		{"DeleteAgent", func(ctx context.Context) error { return f.DeleteAgent(ctx, a.OrgID, a.Name) }},
	}
}

// wantNoAccountWritten checks that the cancelled Accounts and Agents
// writes stored nothing new and left the held records as they were.
func (f *fixture) wantNoAccountWritten(t *testing.T, w accountWrites) {
	_, err := f.GetOrg(t.Context(), w.org.ID)
	wantNotFound(t, "GetOrg after cancelled CreateOrg", err)
	_, err = f.GetUser(t.Context(), w.user.OrgID, w.user.ID)
	wantNotFound(t, "GetUser after cancelled CreateUser", err)
	f.wantGone(t, "LookupCredential after cancelled CreateUser", w.first.Kind, w.first.Hash, at(20))
	f.wantGone(t, "LookupCredential after cancelled PutCredential", w.cred.Kind, w.cred.Hash, at(20))
	_, err = f.GetAgent(t.Context(), w.agent.OrgID, w.agent.Name)
	wantNotFound(t, "GetAgent after cancelled PutAgent", err)

	if d := diff(w.heldUser, f.getUser(t, w.heldOrg.ID, w.heldUser.ID)); d != "" {
		t.Errorf("cancelled ModifyUser, DisableUser or EnableUser changed the user (-want +got):\n%s", d)
	}
	wantCredential(t, "credential after cancelled consume, deletes and disable", w.heldCred,
		f.lookup(t, w.heldCred.Kind, w.heldCred.Hash, at(20)))
	if d := diff(w.heldAgent, f.getAgent(t, w.heldAgent.OrgID, w.heldAgent.Name)); d != "" {
		t.Errorf("cancelled PutAgent or DeleteAgent changed the agent (-want +got):\n%s", d)
	}
}
