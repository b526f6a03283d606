package postgres

import (
	"net/url"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"URL", "postgres://quiver:hunter2@db.internal:5432/quiver?sslmode=require",
			"postgres://quiver:xxxxx@db.internal:5432/quiver?sslmode=require"},
		{"PostgresqlScheme", "postgresql://quiver:hunter2@db/quiver", "postgresql://quiver:xxxxx@db/quiver"},
		{"NoPassword", "postgres://quiver@db/quiver", "postgres://quiver@db/quiver"},
		{"NoUser", "postgres://db:5432/quiver", "postgres://db:5432/quiver"},
		{"EscapedPassword", "postgres://quiver:p%40ss%2Fw@db/quiver", "postgres://quiver:xxxxx@db/quiver"},
		{"PasswordParam", "postgres://db/quiver?password=hunter2&sslmode=disable",
			"postgres://db/quiver?password=xxxxx&sslmode=disable"},
		{"SSLPasswordParam", "postgres://u@db/q?sslpassword=hunter2", "postgres://u@db/q?sslpassword=xxxxx"},
		{"Keyword", "host=db user=quiver password=hunter2 dbname=quiver",
			"host=db user=quiver password=xxxxx dbname=quiver"},
		{"KeywordQuoted", `host=db password='hun ter\'2' dbname=quiver`, "host=db password=xxxxx dbname=quiver"},
		{"KeywordSpaces", "host=db password = hunter2", "host=db password = xxxxx"},
		{"KeywordSSL", "host=db sslpassword=hunter2", "host=db sslpassword=xxxxx"},
		{"KeywordUpper", "host=db PASSWORD=hunter2", "host=db PASSWORD=xxxxx"},
		{"Unparseable", "postgres://quiver:hunter2@db:port/quiver", "postgres://quiver:xxxxx@db:port/quiver"},
		{"Empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactURL(tc.in); got != tc.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// staticText holds every character the fuzzed forms and the mask consist
// of, besides the password.
const staticText = "postgres://quiver:@db:5432/quiver?password=host=db password='' dbname=q xxxxx?sslmode=disable"

// FuzzRedactURL puts a password in each place a URL or connection string
// holds one and checks that RedactURL's answer never shows it.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"hunter2", "p@ss:w/rd", "a b'c", `x\'y`, "%41"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, password string) {
		if !strings.ContainsFunc(password, func(r rune) bool { return !strings.ContainsRune(staticText, r) }) {
			// Made only of the forms' own characters, the password may
			// appear in the answer by chance.
			t.Skip()
		}
		forms := []string{
			"postgres://" + url.UserPassword("quiver", password).String() + "@db:5432/quiver",
			"postgres://quiver:" + password + "@db/quiver",
			"postgres://quiver:" + password + "@db/quiver?sslmode=disable",
			"postgres://db/quiver?password=" + url.QueryEscape(password),
			"host=db password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(password) + "' dbname=q",
		}
		if !strings.ContainsAny(password, " \t\n\v\f\r") {
			forms = append(forms, "host=db password="+password+" dbname=q")
		}
		for _, in := range forms {
			if out := RedactURL(in); strings.Contains(out, password) ||
				strings.Contains(out, url.QueryEscape(password)) || strings.Contains(out, url.PathEscape(password)) {
				t.Errorf("RedactURL(%q) = %q shows the password", in, out)
			}
		}
	})
}
