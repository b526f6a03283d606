package discordtest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"
)

func TestCommandsBulkOverwrite(t *testing.T) {
	f := newFixture(t, nil)
	app := f.srv.ApplicationID()
	perm := int64(PermManageMessages)
	first, err := f.dg.ApplicationCommandBulkOverwrite(app, "", []*discordgo.ApplicationCommand{
		{Name: "ask", Description: "Ask the agent", Options: []*discordgo.ApplicationCommandOption{
			{Type: discordgo.ApplicationCommandOptionString, Name: "question", Description: "What to ask", Required: true},
		}},
		{Name: "forget", Description: "Forget this channel", DefaultMemberPermissions: &perm},
	})
	if err != nil || len(first) != 2 || first[0].ID == "" || first[0].ApplicationID != app {
		t.Fatalf("BulkOverwrite = %+v, %v", first, err)
	}
	second, err := f.dg.ApplicationCommandBulkOverwrite(app, "", []*discordgo.ApplicationCommand{
		{Name: "forget", Description: "Forget this channel"},
		{Name: "Summary", Type: discordgo.MessageApplicationCommand},
	})
	if err != nil {
		t.Fatal(err)
	}
	if second[0].ID != first[1].ID {
		t.Errorf("overwritten forget has id %s, want the kept %s", second[0].ID, first[1].ID)
	}
	listed, err := f.dg.ApplicationCommands(app, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range listed {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"forget", "Summary"}, names); diff != "" {
		t.Errorf("ApplicationCommands (-want +got):\n%s", diff)
	}
	if got := f.srv.Commands(""); len(got) != 2 || got[1].Type != 3 {
		t.Errorf("Commands = %+v", got)
	}

	g, err := f.dg.ApplicationCommandCreate(app, f.guild.ID, &discordgo.ApplicationCommand{Name: "ask", Description: "Ask here", DefaultMemberPermissions: &perm})
	if err != nil || g.GuildID != f.guild.ID || g.DefaultMemberPermissions == nil || *g.DefaultMemberPermissions != perm {
		t.Fatalf("guild ApplicationCommandCreate = %+v, %v", g, err)
	}
	if got := f.srv.Commands(f.guild.ID); len(got) != 1 || got[0].DefaultMemberPermissions == nil || *got[0].DefaultMemberPermissions != PermManageMessages {
		t.Errorf("guild Commands = %+v", got)
	}
	if err := f.dg.ApplicationCommandDelete(app, f.guild.ID, g.ID); err != nil || len(f.srv.Commands(f.guild.ID)) != 0 {
		t.Errorf("ApplicationCommandDelete: %v, left %+v", err, f.srv.Commands(f.guild.ID))
	}

	bad := []struct {
		name string
		cmds []*discordgo.ApplicationCommand
	}{
		{"upper-case slash name", []*discordgo.ApplicationCommand{{Name: "Ask", Description: "d"}}},
		{"space in name", []*discordgo.ApplicationCommand{{Name: "ask me", Description: "d"}}},
		{"no description", []*discordgo.ApplicationCommand{{Name: "ask"}}},
		{"duplicate", []*discordgo.ApplicationCommand{{Name: "ask", Description: "d"}, {Name: "ask", Description: "e"}}},
	}
	for _, tt := range bad {
		_, err := f.dg.ApplicationCommandBulkOverwrite(app, "", tt.cmds)
		restErr(t, err, http.StatusBadRequest, 50035)
	}
	if got := f.srv.Commands(""); len(got) != 2 {
		t.Errorf("a refused overwrite changed the commands: %+v", got)
	}
	_, err = f.dg.ApplicationCommands("1", "")
	restErr(t, err, http.StatusForbidden, 50001)
}

func TestInteractionRoundTrip(t *testing.T) {
	f := newFixture(t, nil)
	app := f.srv.ApplicationID()
	cmds, err := f.dg.ApplicationCommandBulkOverwrite(app, f.guild.ID, []*discordgo.ApplicationCommand{{Name: "ask", Description: "Ask"}})
	if err != nil {
		t.Fatal(err)
	}
	f.open(t)

	id, token := f.srv.Interact(Interaction{GuildID: f.guild.ID, ChannelID: f.text.ID, UserID: f.alice.User.ID,
		CommandName: "ask", Options: []CommandOption{{Name: "question", Type: 3, Value: "why?"}}})
	ic := recv(t, f.inters, "INTERACTION_CREATE")
	if ic.ID != id || ic.Token != token || ic.Type != discordgo.InteractionApplicationCommand || ic.AppID != app {
		t.Fatalf("interaction %+v", ic.Interaction)
	}
	data := ic.ApplicationCommandData()
	if data.ID != cmds[0].ID || data.Name != "ask" || len(data.Options) != 1 || data.Options[0].StringValue() != "why?" {
		t.Errorf("data %+v", data)
	}
	if ic.Member == nil || ic.Member.User.ID != f.alice.User.ID || ic.Member.Permissions != int64(PermDefaultEveryone) {
		t.Errorf("member %+v, want alice with %d", ic.Member, PermDefaultEveryone)
	}
	if ic.AppPermissions != int64(f.srv.Permissions(f.text.ID)) {
		t.Errorf("app_permissions %d, want %d", ic.AppPermissions, f.srv.Permissions(f.text.ID))
	}

	err = f.dg.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "because"},
	})
	if err != nil {
		t.Fatalf("InteractionRespond: %v", err)
	}
	resps := f.srv.InteractionResponses()
	if len(resps) != 1 || resps[0].InteractionID != id || resps[0].Type != 4 {
		t.Fatalf("InteractionResponses = %+v", resps)
	}
	var sent struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(resps[0].Data, &sent) != nil || sent.Content != "because" {
		t.Errorf("recorded data %s", resps[0].Data)
	}
	err = f.dg.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: "twice"}})
	restErr(t, err, http.StatusBadRequest, 40060)

	orig, err := f.dg.InteractionResponse(ic.Interaction)
	if err != nil || orig.Content != "because" || orig.Author.ID != f.srv.Bot().ID {
		t.Fatalf("InteractionResponse = %+v, %v", orig, err)
	}
	edit := "because, edited"
	if m, err := f.dg.InteractionResponseEdit(ic.Interaction, &discordgo.WebhookEdit{Content: &edit}); err != nil || m.Content != edit {
		t.Fatalf("InteractionResponseEdit = %+v, %v", m, err)
	}
	fu, err := f.dg.FollowupMessageCreate(ic.Interaction, true, &discordgo.WebhookParams{Content: "one more thing"})
	if err != nil || fu.Content != "one more thing" {
		t.Fatalf("FollowupMessageCreate = %+v, %v", fu, err)
	}
	var got []string
	for _, m := range f.srv.Messages(f.text.ID) {
		got = append(got, m.Content)
		if m.InteractionID != id || m.Type != 20 {
			t.Errorf("message %+v not marked as the interaction's", m)
		}
	}
	if diff := cmp.Diff([]string{edit, "one more thing"}, got); diff != "" {
		t.Errorf("channel messages (-want +got):\n%s", diff)
	}

	unknown := *ic.Interaction
	unknown.Token = "nope"
	err = f.dg.InteractionRespond(&unknown, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource})
	restErr(t, err, http.StatusNotFound, 10062)
	_, err = f.dg.FollowupMessageCreate(&unknown, true, &discordgo.WebhookParams{Content: "x"})
	restErr(t, err, http.StatusNotFound, 10015)
}
