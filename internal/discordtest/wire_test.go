package discordtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/golden"
)

// TestWireGolden pins the JSON the fake sends for a message, over REST and
// as a MESSAGE_CREATE frame, so a change of wire shape shows as a diff.
// Rewrite with -update after checking the change against Discord's docs.
func TestWireGolden(t *testing.T) {
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	srv := StartWith(t, &Options{Now: func() time.Time { return at },
		Bot: User{ID: "1000000000000000001", Username: "quiver-bot"}, PrivilegedIntents: intentMessageContent})
	g := srv.AddGuild(Guild{ID: "2000000000000000002", Name: "g", OwnerID: "3000000000000000003", EveryonePermissions: PermDefaultEveryone})
	ch := srv.AddChannel(Channel{ID: "4000000000000000004", GuildID: g.ID, Name: "general"})
	alice := srv.AddMember(Member{GuildID: g.ID, Nick: "ali", JoinedAt: at.Add(-time.Hour),
		User: User{ID: "5000000000000000005", Username: "alice", GlobalName: "Alice", Avatar: "a1b2"}})
	st := srv.AddSticker(Sticker{ID: "6000000000000000006", GuildID: g.ID, Name: "wave"})
	first := srv.SendMessage(ch.ID, alice.User.ID, "first")

	c := dialGateway(t, srv, "v=10&encoding=json")
	c.read() // HELLO
	c.send(`{"op":2,"d":{"token":"test-token","intents":33281}}`)
	for i := 0; i < 2; i++ { // READY, GUILD_CREATE
		if _, err := c.read(); err != nil {
			t.Fatal(err)
		}
	}
	reply := srv.PostMessage(Message{ChannelID: ch.ID, Author: User{ID: alice.User.ID}, Content: "second",
		Reference: &MessageReference{MessageID: first.ID}, StickerIDs: []string{st.ID},
		Reactions: []Reaction{{Emoji: "👍", UserIDs: []string{alice.User.ID}}}})
	f, err := c.read()
	if err != nil || f.T == nil || *f.T != "MESSAGE_CREATE" {
		t.Fatalf("frame %+v, %v", f, err)
	}
	golden.Check(t, "golden/message_create.json", indent(t, f.D))

	req, _ := http.NewRequest("GET", srv.URL()+"/api/v10/channels/"+ch.ID+"/messages/"+reply.ID, nil)
	req.Header.Set("Authorization", srv.AuthToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	golden.Check(t, "golden/get_message.json", indent(t, body))
}

func indent(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatalf("indent %s: %v", raw, err)
	}
	return b.String() + "\n"
}
