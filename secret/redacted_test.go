package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type server struct {
	Name  string
	Token Redacted
}

func TestRedacted(t *testing.T) {
	tests := []struct {
		name string
		tok  Redacted
		want string
	}{
		{"set", Redacted(token), "set"},
		{"not set", "", "not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server{Name: "gh", Token: tt.tok}
			var outs []string
			for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s"} {
				outs = append(outs, fmt.Sprintf(f, tt.tok), fmt.Sprintf(f, srv), fmt.Sprintf(f, &srv))
			}
			outs = append(outs, fmt.Sprint(tt.tok), fmt.Sprintln(srv), tt.tok.String(), tt.tok.GoString())
			for _, o := range outs {
				if !strings.Contains(o, tt.want) {
					t.Errorf("fmt output %q lacks %q", o, tt.want)
				}
				assertNoLeak(t, o, token, fmt.Sprintf("%x", token))
			}
			if got := fmt.Sprint(tt.tok); got != tt.want {
				t.Errorf("Sprint = %q, want %q", got, tt.want)
			}
			if tt.tok.Reveal() != string(tt.tok) || tt.tok.IsSet() != (tt.want == "set") {
				t.Errorf("Reveal/IsSet inconsistent")
			}
		})
	}
}

func TestRedactedJSON(t *testing.T) {
	srv := server{Name: "gh", Token: Redacted(token)}
	got, err := json.Marshal(map[string]any{"a": srv, "b": []Redacted{"", token}, "c": &srv})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"Name":"gh","Token":"set"},"b":["not set","set"],"c":{"Name":"gh","Token":"set"}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("json (-want +got):\n%s", diff)
	}
}

func TestRedactedSlog(t *testing.T) {
	for _, h := range []struct {
		name string
		new  func(*bytes.Buffer) slog.Handler
		want []string
	}{
		{"text", func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) }, []string{"token=set", "empty=\"not set\"", "srv.Token=set"}},
		{"json", func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) }, []string{`"token":"set"`, `"empty":"not set"`, `"Token":"set"`}},
	} {
		t.Run(h.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(h.new(&buf))
			log.Info("connect",
				"token", Redacted(token),
				slog.Any("empty", Redacted("")),
				slog.Group("srv", "Token", Redacted(token)),
				"struct", server{Name: "gh", Token: token})
			out := buf.String()
			for _, w := range h.want {
				if !strings.Contains(out, w) {
					t.Errorf("log %q lacks %q", out, w)
				}
			}
			assertNoLeak(t, out, token)
		})
	}
}
