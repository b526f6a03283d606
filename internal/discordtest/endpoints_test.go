package discordtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"
)

// TestEndpointVarsCoverDiscordgo reads discordgo's endpoints.go and checks
// that endpointVars names every string endpoint variable it declares, so
// a discordgo upgrade that adds one fails here instead of reaching out.
func TestEndpointVarsCoverDiscordgo(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/bwmarrin/discordgo").Output()
	if err != nil {
		t.Skipf("go list discordgo: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "endpoints.go")
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	kind := map[string]bool{} // name -> is a function
	var order []string
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Endpoint") || i >= len(vs.Values) {
					continue
				}
				switch v := vs.Values[i].(type) {
				case *ast.FuncLit:
					kind[name.Name] = true
				case *ast.Ident:
					kind[name.Name] = kind[v.Name]
				default:
					kind[name.Name] = false
				}
				order = append(order, name.Name)
			}
		}
	}
	var want []string
	for _, n := range order {
		if !kind[n] {
			want = append(want, n)
		}
	}
	var got []string
	for _, v := range endpointVars() {
		got = append(got, v.name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("string endpoints of %s (-discordgo +endpointVars):\n%s", path, diff)
	}
}

func TestPointDiscordgoPointsAndRestores(t *testing.T) {
	before := make([]string, 0)
	for _, v := range endpointVars() {
		before = append(before, *v.p)
	}
	var url string
	t.Run("pointed", func(t *testing.T) {
		srv := Start(t)
		srv.PointDiscordgo(t)
		url = srv.URL() + "/"
		for _, v := range endpointVars() {
			if !strings.HasPrefix(*v.p, url) {
				t.Errorf("%s = %s, not under %s", v.name, *v.p, url)
			}
		}
		for _, u := range []string{
			discordgo.EndpointChannelMessage("1", "2"), discordgo.EndpointUserAvatar("1", "h"),
			discordgo.EndpointInteractionResponse("1", "t"), discordgo.EndpointApplicationGuildCommands("1", "2"),
			discordgo.EndpointWebhookMessage("1", "t", "@original"), discordgo.EndpointGuildStickers("1"),
		} {
			if !strings.HasPrefix(u, url) {
				t.Errorf("%s not under %s", u, url)
			}
		}
		if discordgo.EndpointAPI != url+"api/v"+discordgo.APIVersion+"/" {
			t.Errorf("EndpointAPI = %s", discordgo.EndpointAPI)
		}
	})
	var after []string
	for _, v := range endpointVars() {
		after = append(after, *v.p)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("not restored (-before +after):\n%s", diff)
	}
	if slices.ContainsFunc(after, func(s string) bool { return strings.HasPrefix(s, url) }) {
		t.Error("an endpoint still points at the stopped fake")
	}
}

// The session NewSession makes cannot leave loopback even for a URL that
// discordgo's variables do not cover.
func TestNewSessionReachesOnlyTheFake(t *testing.T) {
	srv := Start(t)
	srv.PointDiscordgo(t)
	dg := srv.NewSession(t)
	_, err := dg.Request("GET", "http://127.0.0.2:9/api/v9/users/@me", nil)
	if err == nil || !strings.Contains(err.Error(), "refused to dial") {
		t.Errorf("request elsewhere: %v, want refused", err)
	}
	if _, err := dg.User("@me"); err != nil {
		t.Errorf("request to the fake: %v", err)
	}
}
