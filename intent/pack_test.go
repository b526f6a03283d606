package intent_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/intent"
)

func TestPackErrors(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		line int
		msg  string
	}{
		{"empty entry", "lang: xx\ntriggers:\n  search:\n    - look up\n    - \"\"\n", 5, "empty phrase"},
		{"null entry", "lang: xx\ntriggers:\n  search:\n    - look up\n    -\n", 5, "empty phrase"},
		{"whitespace entry", "lang: xx\nignore:\n  - \"  \"\n", 3, "empty phrase"},
		{"regex group", "lang: xx\ntriggers:\n  image:\n    - dr(a|e)w\n", 4, "regular expression syntax"},
		{"regex dot", "lang: xx\nfollowups:\n  - again.\n", 3, "regular expression syntax"},
		{"regex question mark", "lang: xx\nignore: [\"really?\"]\n", 2, "regular expression syntax"},
		{"regex anchor", "lang: xx\ntriggers:\n  memory: [\"^remember\"]\n", 3, "regular expression syntax"},
		{"star inside", "lang: xx\ntriggers:\n  reminder:\n    - re*mind\n", 4, "'*' is allowed only at the end"},
		{"star alone after one letter", "lang: xx\ntriggers:\n  reminder:\n    - r*\n", 4, "at least two characters"},
		{"one-character Han", "lang: zz\ntriggers:\n  image:\n    - 画一\n    - 画\n", 5, "two characters"},
		{"one-character kana", "lang: zz\nfollowups:\n  - も\n", 3, "two characters"},
		{"one-character Hangul combo verb", "lang: zz\ncombos:\n  - target: image\n    verbs: [그려줘, 줘]\n    nouns: [그림]\n", 4, "two characters"},
		{"unknown trigger target", "lang: xx\ntriggers:\n  search: [look up]\n  pictures:\n    - pic\n", 5, `unknown target "pictures"`},
		{"unknown combo target", "lang: xx\ncombos:\n  - target: pictures\n    verbs: [draw]\n    nouns: [pic]\n", 3, `unknown target "pictures"`},
		{"combo without nouns", "lang: xx\ncombos:\n  - target: image\n    verbs: [draw]\n  - target: video\n    verbs: [make]\n    nouns: [video]\n", 3, "needs verbs and nouns"},
		{"second combo without verbs", "lang: xx\ncombos:\n  - target: image\n    verbs: [draw]\n    nouns: [pic]\n  - target: video\n    nouns: [video]\n", 6, "needs verbs and nouns"},
		{"missing lang", "triggers:\n  search: [look up]\n", 1, "lang is required"},
		{"unknown field", "lang: xx\ntrigers:\n  search: [look up]\n", 2, "field trigers not found"},
		{"a list where a phrase belongs", "lang: xx\ntriggers:\n  search:\n    - [look, up]\n", 4, "cannot unmarshal !!seq into string"},
		{"YAML syntax", "lang: xx\ntriggers:\n\tsearch: [look up]\n", 3, "cannot start any token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{"packs/ok.yaml": {Data: []byte("lang: ok\ntriggers:\n  search: [look up]\n")}, "packs/xx.yaml": {Data: []byte(c.yaml)}}
			_, err := intent.LoadPacks(fsys, "packs")
			var pe *intent.PackError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *PackError", err)
			}
			if pe.File != "packs/xx.yaml" || pe.Line != c.line || !strings.Contains(pe.Msg, c.msg) {
				t.Errorf("got %s:%d %q, want packs/xx.yaml:%d and a message containing %q", pe.File, pe.Line, pe.Msg, c.line, c.msg)
			}
			if !strings.HasPrefix(err.Error(), "packs/xx.yaml:") {
				t.Errorf("error %q does not start with file:line", err)
			}
		})
	}
}

func TestLoadPacks(t *testing.T) {
	fsys := fstest.MapFS{
		"p/b.yaml":   {Data: []byte("lang: b\ntriggers:\n  image: [pic, \"画像\"]\nignore: [nice pic]\nfollowups: [again]\n")},
		"p/a.yaml":   {Data: []byte("lang: a\ncombos:\n  - target: video\n    verbs: [make]\n    nouns: [clip]\n")},
		"p/notes.md": {Data: []byte("not a pack")},
	}
	packs, err := intent.LoadPacks(fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []intent.Pack{
		{Lang: "a", Combos: []intent.Combo{{Target: intent.Video, Verbs: []string{"make"}, Nouns: []string{"clip"}}}},
		{Lang: "b", Triggers: map[string][]string{intent.Image: {"pic", "画像"}}, Ignore: []string{"nice pic"}, Followups: []string{"again"}},
	}
	if diff := cmp.Diff(want, packs); diff != "" {
		t.Errorf("packs sorted by file name (-want +got):\n%s", diff)
	}
	if packs, err := intent.LoadPacks(fstest.MapFS{}, "p"); err != nil || len(packs) != 0 {
		t.Errorf("empty dir: %v, %v", packs, err)
	}
}

// TestBuiltinPacks checks the shipped packs: the eleven languages, each
// file's lang its name, and no phrase listed twice in one list (a repeat
// is harmless to matching but a sign of a muddled edit).
func TestBuiltinPacks(t *testing.T) {
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	var langs []string
	for _, p := range packs {
		langs = append(langs, p.Lang)
		check := func(where string, phrases []string) {
			seen := map[string]bool{}
			for _, ph := range phrases {
				n := intent.Normalise(ph)
				if seen[n] {
					t.Errorf("%s.yaml %s: %q listed twice", p.Lang, where, ph)
				}
				seen[n] = true
			}
		}
		for target, phrases := range p.Triggers {
			check("triggers."+target, phrases)
		}
		for _, c := range p.Combos {
			check("combo "+c.Target+" verbs", c.Verbs)
			check("combo "+c.Target+" nouns", c.Nouns)
		}
		check("ignore", p.Ignore)
		check("followups", p.Followups)
		if len(p.Followups) == 0 {
			t.Errorf("%s.yaml has no follow-up phrases", p.Lang)
		}
	}
	want := []string{"de", "en", "es", "fr", "id", "ja", "ko", "pt", "ru", "vi", "zh"}
	if diff := cmp.Diff(want, langs); diff != "" {
		t.Errorf("languages (-want +got):\n%s", diff)
	}
	// English, the built-in rules, reaches every target but apps, which
	// only custom triggers open.
	en := packs[slices.IndexFunc(packs, func(p intent.Pack) bool { return p.Lang == "en" })]
	for _, target := range intent.Targets {
		if target == intent.Apps {
			continue
		}
		if len(en.Triggers[target]) == 0 && !slices.ContainsFunc(en.Combos, func(c intent.Combo) bool { return c.Target == target }) {
			t.Errorf("en.yaml has no trigger or combo for %s", target)
		}
	}
}

// TestIssueExamples holds the behaviours the issue names, in every
// language: bare save/forget words open nothing, capability questions open
// capabilities and not search.
func TestIssueExamples(t *testing.T) {
	d := detector(t)
	nothing := []string{
		"I forgot my password", "save the image", "パスワード忘れてた", "画像を保存して",
		"nice pictures!", "quên mật khẩu rồi", "我忘了密码", "비밀번호 까먹었어",
		"olvidé mi contraseña", "esqueci minha senha", "j'ai oublié mon mot de passe",
		"ich hab mein Passwort vergessen", "забыл пароль", "aku lupa password",
		"guarda la imagen", "salva a imagem", "enregistre l'image", "speicher das Bild",
		"сохрани картинку", "simpan gambarnya", "lưu ảnh lại", "保存图片", "사진 저장했어",
	}
	for _, text := range nothing {
		if got := d.Detect(intent.Input{Text: text}).Targets; len(got) != 0 {
			t.Errorf("%q opened %v, want nothing", text, got)
		}
	}
	capability := []string{
		"which model are you", "what tools do you have", "why can't you search", "how does your memory work",
		"bạn là model gì?", "sao bạn không tìm kiếm được?", "どのモデルを使ってるの？", "なんで検索できないの？",
		"你是什么模型？", "为什么你不能上网搜索？", "너 무슨 모델이야?", "왜 검색을 못 해?",
		"¿qué modelo eres?", "¿por qué no puedes buscar en internet?", "qual modelo você é?",
		"por que você não consegue pesquisar?", "tu es quel modèle ?", "pourquoi tu ne peux pas chercher sur internet ?",
		"welches Modell bist du?", "warum kannst du nicht im Internet suchen?", "какая ты модель?",
		"почему ты не можешь искать в интернете?", "kamu pakai model apa?", "kenapa kamu nggak bisa cari di internet?",
	}
	for _, text := range capability {
		got := d.Detect(intent.Input{Text: text})
		if !got.Has(intent.Capabilities) || got.Has(intent.Search) {
			t.Errorf("%q opened %v, want capabilities without search", text, got.Targets)
		}
	}
	follow := map[string]string{
		"en": "do that again but angrier", "vi": "làm lại nhưng giận dữ hơn", "ja": "もう一回", "zh": "再来一次",
		"ko": "한 번 더", "es": "otra vez", "pt": "de novo", "fr": "encore une fois", "de": "nochmal",
		"ru": "ещё раз", "id": "sekali lagi",
	}
	for lang, text := range follow {
		audio := []intent.Message{{Role: intent.RoleUser, Text: "hi"}, {Role: intent.RoleAssistant, Attachments: []string{intent.AttachAudio}}}
		if got := d.Detect(intent.Input{Text: text, History: audio}).Targets; !slices.Equal(got, []string{intent.Voice}) {
			t.Errorf("%s %q after a voice message opened %v, want voice", lang, text, got)
		}
		if got := d.Detect(intent.Input{Text: text}).Targets; len(got) != 0 {
			t.Errorf("%s %q with nothing to follow opened %v", lang, text, got)
		}
	}
}

// TestLoadDetector: the built-in packs always load; a folder's packs are
// added after them; a folder with an invalid pack is a *DirError whose
// *PackError names the file and line.
func TestLoadDetector(t *testing.T) {
	builtin, err := intent.LoadDetector("")
	if err != nil {
		t.Fatal(err)
	}
	const phrase = "zorblat the quux"
	if res := builtin.Detect(intent.Input{Text: phrase}); len(res.Targets) != 0 {
		t.Fatalf("built-in packs open %v for %q", res.Targets, phrase)
	}
	if res := builtin.Detect(intent.Input{Text: "draw me a picture of a cat"}); !res.Has(intent.Image) {
		t.Errorf("built-in packs: %v, want image opened", res.Targets)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte("lang: xx\ntriggers:\n  image: [zorblat]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	more, err := intent.LoadDetector(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res := more.Detect(intent.Input{Text: phrase}); !res.Has(intent.Image) {
		t.Errorf("with %s: %v, want image opened by the folder's pack", dir, res.Targets)
	}
	if res := more.Detect(intent.Input{Text: "draw me a picture of a cat"}); !res.Has(intent.Image) {
		t.Errorf("with %s the built-in packs no longer apply: %v", dir, res.Targets)
	}

	if err := os.WriteFile(filepath.Join(dir, "zz.yaml"), []byte("lang: zz\ntriggers:\n  image:\n    - dr(a|e)w\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	det, err := intent.LoadDetector(dir)
	de, ok := errors.AsType[*intent.DirError](err)
	if det != nil || !ok || de.Dir != dir {
		t.Fatalf("invalid pack: %v, %v; want a *DirError for %s", det, err, dir)
	}
	if pe, ok := errors.AsType[*intent.PackError](err); !ok || pe.File != "zz.yaml" || pe.Line != 4 {
		t.Errorf("invalid pack: %v, want a *PackError at zz.yaml:4", err)
	}
}
