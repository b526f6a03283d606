package intent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/intent"
)

// targets runs a detector over one pack and returns what text opens.
func targets(t *testing.T, p intent.Pack, in intent.Input) []string {
	t.Helper()
	if p.Lang == "" {
		p.Lang = "test"
	}
	return intent.New([]intent.Pack{p}).Detect(in).Targets
}

func TestMatchingRules(t *testing.T) {
	trig := func(target string, phrases ...string) intent.Pack {
		return intent.Pack{Triggers: map[string][]string{target: phrases}}
	}
	cases := []struct {
		name string
		pack intent.Pack
		text string
		want []string
	}{
		{"a phrase is a whole word", trig(intent.Image, "pic"), "send a pic!", []string{intent.Image}},
		{"pic does not match pictures", trig(intent.Image, "pic"), "nice pictures", nil},
		{"pic does not match epic", trig(intent.Image, "pic"), "that was epic", nil},
		{"whole text", trig(intent.Image, "pic"), "pic", []string{intent.Image}},
		{"prefix: reminder", trig(intent.Reminder, "remind*"), "is my reminder set?", []string{intent.Reminder}},
		{"prefix: reminding", trig(intent.Reminder, "remind*"), "keep reminding me", []string{intent.Reminder}},
		{"prefix: the stem itself", trig(intent.Reminder, "remind*"), "remind me", []string{intent.Reminder}},
		{"prefix needs a word start", trig(intent.Reminder, "remind*"), "the preminder", nil},
		{"prefix in Cyrillic", trig(intent.Reminder, "напомн*"), "Напомни мне", []string{intent.Reminder}},
		{"prefix stops at its stem", trig(intent.Reminder, "напомн*"), "это напоминает лето", nil},
		{"multi-word phrase", trig(intent.Search, "look up"), "can you look up the score", []string{intent.Search}},
		{"multi-word phrase needs boundaries", trig(intent.Search, "look up"), "look upward", nil},
		{"kana inside a longer word", trig(intent.Reminder, "リマインド"), "明日リマインドしてね", []string{intent.Reminder}},
		{"Hangul with a particle", trig(intent.Reminder, "알림"), "알림을 줘", []string{intent.Reminder}},
		{"Han inside a sentence", trig(intent.Reminder, "提醒我"), "明天提醒我开会", []string{intent.Reminder}},
		{"Latin word glued to CJK is at a boundary", trig(intent.MediaAnalysis, "pdf"), "送ったPDF読んで", []string{intent.MediaAnalysis}},
		{"Latin word inside a Latin word is not", trig(intent.MediaAnalysis, "pdf"), "pdfs", nil},
		{"case-folded", trig(intent.Reminder, "remind me"), "REMIND ME", []string{intent.Reminder}},
		{"full-width letters", trig(intent.Reminder, "remind me"), "ＲＥＭＩＮＤ　ＭＥ", []string{intent.Reminder}},
		{"full-width phrase", trig(intent.Reminder, "ＲＥＭＩＮＤ me"), "remind me", []string{intent.Reminder}},
		{"whitespace runs", trig(intent.Reminder, "remind me"), "remind \n\t  me", []string{intent.Reminder}},
		{"typographic apostrophe in the text", trig(intent.Memory, "don't forget that"), "Don’t forget that", []string{intent.Memory}},
		{"typographic apostrophe in the phrase", trig(intent.Memory, "don’t forget that"), "don't forget that", []string{intent.Memory}},
		{"decomposed diacritics", trig(intent.Reminder, "nhắc tôi"), "nha\u0306\u0301c to\u0302i lúc 5h", []string{intent.Reminder}},
		{"German sharp s folds to ss", trig(intent.Memory, "was weisst du"), "Was weißt du?", []string{intent.Memory}},
		{"a non-word end needs no boundary", trig(intent.CrossChannel, "send it to #"), "send it to #general", []string{intent.CrossChannel}},
		{"a non-word start needs no boundary", trig(intent.Calculator, "% of"), "what's 15% of 80", []string{intent.Calculator}},
		{"hyphen joins words", trig(intent.Capabilities, "gpt"), "is gpt-4 good", nil},
		{"empty text", trig(intent.Image, "pic"), "  \n ", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := targets(t, c.pack, intent.Input{Text: c.text})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%q (-want +got):\n%s", c.text, diff)
			}
		})
	}
}

func TestCombos(t *testing.T) {
	pack := intent.Pack{Combos: []intent.Combo{
		{Target: intent.Image, Verbs: []string{"draw", "make"}, Nouns: []string{"picture", "image"}},
		{Target: intent.Video, Verbs: []string{"作って"}, Nouns: []string{"動画"}},
	}}
	cases := []struct {
		name, text string
		want       []string
	}{
		{"verb then noun", "draw me a picture of a fox", []string{intent.Image}},
		{"noun then verb", "a picture of a fox, can you draw one", []string{intent.Image}},
		{"verb alone", "draw a fox", nil},
		{"noun alone", "nice picture", nil},
		{"split by a full stop", "I will draw. The picture is nice.", nil},
		{"split by a question mark", "can you draw? nice picture", nil},
		{"a dot inside a word does not split", "draw notes.txt as a picture", []string{intent.Image}},
		{"a URL does not split", "make https://example.com/a?b=c.d into an image", []string{intent.Image}},
		{"CJK in one sentence", "海の動画を作って", []string{intent.Video}},
		{"CJK split by 。", "動画。作って", nil},
		{"verb and noun of different combos", "draw the 動画", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, targets(t, pack, intent.Input{Text: c.text})); diff != "" {
				t.Errorf("%q (-want +got):\n%s", c.text, diff)
			}
		})
	}
}

func TestIgnoreAndContainment(t *testing.T) {
	pack := intent.Pack{
		Triggers: map[string][]string{
			intent.Memory:        {"remember"},
			intent.Search:        {"what's new with"},
			intent.Image:         {"picture"},
			intent.MediaAnalysis: {"my profile picture"},
			intent.Capabilities:  {"why can't you"},
		},
		Combos: []intent.Combo{{Target: intent.Image, Verbs: []string{"save"}, Nouns: []string{"image"}}},
		Ignore: []string{"i remember", "what's new", "save the image"},
	}
	cases := []struct {
		name, text string
		want       []string
	}{
		{"a trigger inside an ignore phrase", "I remember that summer", nil},
		{"the same trigger outside it", "I remember it, but remember this too", []string{intent.Memory}},
		{"an ignore phrase inside a longer trigger drops nothing", "what's new with go?", []string{intent.Search}},
		{"a combo verb inside an ignore phrase", "save the image please", nil},
		{"a shorter trigger inside a longer one of another target", "look at my profile picture", []string{intent.MediaAnalysis}},
		{"the shorter trigger alone", "a picture", []string{intent.Image}},
		{"a capability question hides search and memory", "why can't you remember? what's new with you", []string{intent.Capabilities}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, targets(t, pack, intent.Input{Text: c.text})); diff != "" {
				t.Errorf("%q (-want +got):\n%s", c.text, diff)
			}
		})
	}
}

// followPack has a follow-up phrase and two requests to follow.
var followPack = intent.Pack{
	Triggers:  map[string][]string{intent.Image: {"draw"}, intent.Voice: {"voice message"}},
	Followups: []string{"again"},
}

func user(text string) intent.Message { return intent.Message{Role: intent.RoleUser, Text: text} }

func sent(kinds ...string) intent.Message {
	return intent.Message{Role: intent.RoleAssistant, Text: "here", Attachments: kinds}
}

// chatter returns n user messages that open nothing.
func chatter(n int) []intent.Message {
	var out []intent.Message
	for range n {
		out = append(out, user("hi"))
	}
	return out
}

func TestFollowUps(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		history []intent.Message
		want    []string
	}{
		{"nothing to follow", "again", nil, nil},
		{"only chat to follow", "again", chatter(3), nil},
		{"a user request", "again but bigger", []intent.Message{user("draw a cat")}, []string{intent.Image}},
		{"assistant audio is voice", "again", []intent.Message{user("hi"), sent(intent.AttachAudio)}, []string{intent.Voice}},
		{"assistant image is image", "again", []intent.Message{sent(intent.AttachImage)}, []string{intent.Image}},
		{"assistant video is video", "again", []intent.Message{sent(intent.AttachVideo)}, []string{intent.Video}},
		{"an assistant document is nothing to repeat", "again", []intent.Message{sent(intent.AttachDocument)}, nil},
		{"the newest affordance wins", "again", []intent.Message{user("draw a cat"), sent(intent.AttachAudio)}, []string{intent.Voice}},
		{"the newest request wins", "again", []intent.Message{user("voice message"), user("draw")}, []string{intent.Image}},
		{"a follow-up of a follow-up reaches the request", "again", []intent.Message{user("draw"), user("again"), sent()}, []string{intent.Image}},
		{"eighth message back is in the window", "again", append([]intent.Message{user("draw")}, chatter(7)...), []string{intent.Image}},
		{"ninth message back is not", "again", append([]intent.Message{user("draw")}, chatter(8)...), nil},
		{"no follow-up phrase, no follow-up", "nice", []intent.Message{user("draw a cat")}, nil},
		{"a follow-up with its own request", "again, and a voice message", []intent.Message{user("draw")}, []string{intent.Image, intent.Voice}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := intent.New([]intent.Pack{followPack}).Detect(intent.Input{Text: c.text, History: c.history})
			if diff := cmp.Diff(c.want, r.Targets); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, m := range r.Matches {
				if m.Source == intent.SourceFollowUp && !strings.HasPrefix(m.Trigger, "again") {
					t.Errorf("follow-up match %+v does not name its phrase", m)
				}
			}
		})
	}
}

func TestHistoryRescan(t *testing.T) {
	d := intent.New([]intent.Pack{followPack})
	cases := []struct {
		name    string
		turns   int
		history []intent.Message
		want    []string
	}{
		{"zero turns", 0, []intent.Message{user("draw a cat")}, nil},
		{"one turn reaches the last user message", 1, []intent.Message{user("draw a cat")}, []string{intent.Image}},
		{"one turn stops there", 1, []intent.Message{user("draw a cat"), user("ok")}, nil},
		{"assistant messages do not count", 1, []intent.Message{user("draw a cat"), sent(), sent()}, []string{intent.Image}},
		{"ten turns at most: tenth back", 99, append([]intent.Message{user("draw")}, chatter(9)...), []string{intent.Image}},
		{"ten turns at most: eleventh back", 99, append([]intent.Message{user("draw")}, chatter(10)...), nil},
		{"negative is zero", -3, []intent.Message{user("draw a cat")}, nil},
		{"every recent request", 4, []intent.Message{user("draw"), user("voice message")}, []string{intent.Image, intent.Voice}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := d.Detect(intent.Input{Text: "cool", History: c.history, HistoryTurns: c.turns})
			if diff := cmp.Diff(c.want, r.Targets); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, m := range r.Matches {
				if m.Source != intent.SourceHistory {
					t.Errorf("match %+v: source %q, want %q", m, m.Source, intent.SourceHistory)
				}
			}
		})
	}
}

func TestAttachments(t *testing.T) {
	d := intent.New(nil)
	cases := []struct {
		name        string
		text        string
		attachments []string
		want        []string
	}{
		{"image", "", []string{intent.AttachImage}, []string{intent.MediaAnalysis}},
		{"document", "thoughts?", []string{intent.AttachDocument}, []string{intent.MediaAnalysis}},
		{"video", "", []string{intent.AttachVideo}, []string{intent.MediaAnalysis}},
		{"audio has no reader", "", []string{intent.AttachAudio}, nil},
		{"youtu.be link", "watch https://youtu.be/dQw4w9WgXcQ", nil, []string{intent.MediaAnalysis}},
		{"youtube watch link", "https://www.youtube.com/watch?v=dQw4w9WgXcQ lol", nil, []string{intent.MediaAnalysis}},
		{"youtube shorts link", "youtube.com/shorts/abc", nil, []string{intent.MediaAnalysis}},
		{"a channel page is not a video", "https://www.youtube.com/@someone", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := d.Detect(intent.Input{Text: c.text, Attachments: c.attachments})
			if diff := cmp.Diff(c.want, r.Targets); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, m := range r.Matches {
				if m.Source != intent.SourceAttachment {
					t.Errorf("match %+v: source %q", m, m.Source)
				}
			}
		})
	}
}

func TestResultOrderAndMatches(t *testing.T) {
	pack := intent.Pack{Lang: "xx", Triggers: map[string][]string{
		intent.Calculator: {"calc"}, intent.Search: {"look up"}, intent.Image: {"pic"},
	}}
	r := intent.New([]intent.Pack{pack}).Detect(intent.Input{Text: "calc this, pic, look up, pic again"})
	if diff := cmp.Diff([]string{intent.Search, intent.Image, intent.Calculator}, r.Targets); diff != "" {
		t.Errorf("targets not in Targets order (-want +got):\n%s", diff)
	}
	want := []intent.Match{
		{Target: intent.Calculator, Trigger: "calc", Source: intent.SourcePack, Lang: "xx"},
		{Target: intent.Image, Trigger: "pic", Source: intent.SourcePack, Lang: "xx"},
		{Target: intent.Search, Trigger: "look up", Source: intent.SourcePack, Lang: "xx"},
	}
	if diff := cmp.Diff(want, r.Matches); diff != "" {
		t.Errorf("one match per target and source, in text order (-want +got):\n%s", diff)
	}
	if !r.Has(intent.Image) || r.Has(intent.Voice) {
		t.Errorf("Has: %v", r.Targets)
	}
}

func TestCustomTriggers(t *testing.T) {
	custom, err := intent.CompileCustom(map[string][]string{
		intent.Image:        {"PFP", "img"},
		intent.Search:       {"画像検索"},
		intent.Capabilities: {"^"},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := intent.New(nil)
	cases := []struct {
		name, text string
		want       []string
		source     string
	}{
		{"a custom word", "new pfp pls", []string{intent.Image, intent.Capabilities}, intent.SourceCustom},
		{"custom words keep word boundaries", "imgur link", []string{intent.Capabilities}, ""},
		{"a custom CJK phrase matches inside words", "これを画像検索して", []string{intent.Search, intent.Capabilities}, intent.SourceCustom},
		{"^ opens its target every turn", "hello", []string{intent.Capabilities}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := d.Detect(intent.Input{Text: c.text, Custom: custom})
			if diff := cmp.Diff(c.want, r.Targets); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if c.source != "" && !slices.ContainsFunc(r.Matches, func(m intent.Match) bool { return m.Source == c.source }) {
				t.Errorf("no %s match in %+v", c.source, r.Matches)
			}
			if !slices.Contains(r.Matches, intent.Match{Target: intent.Capabilities, Trigger: "^", Source: intent.SourceAlways}) {
				t.Errorf("no always match in %+v", r.Matches)
			}
		})
	}
	// Custom triggers also count in history and follow-ups.
	custom2, err := intent.CompileCustom(map[string][]string{intent.Image: {"pfp"}})
	if err != nil {
		t.Fatal(err)
	}
	r := detector(t).Detect(intent.Input{Text: "do that again", Custom: custom2, History: []intent.Message{user("pfp")}})
	if !r.Has(intent.Image) {
		t.Errorf("follow-up of a custom trigger: %+v", r)
	}
}

func TestCheckCustom(t *testing.T) {
	cases := []struct {
		name, target, phrase string
		want                 string
		wantErr              string
	}{
		{"stored normalised", intent.Image, "  PFP  ", "pfp", ""},
		{"every turn", intent.Image, "^", "^", ""},
		{"prefix", intent.Reminder, "remind*", "remind*", ""},
		{"forty characters", intent.Image, strings.Repeat("x", 40), strings.Repeat("x", 40), ""},
		{"forty-one characters", intent.Image, strings.Repeat("x", 41), "", "at most 40"},
		{"forty CJK characters", intent.Image, strings.Repeat("画", 40), strings.Repeat("画", 40), ""},
		{"unknown target", "pictures", "pic", "", "unknown target"},
		{"regex syntax", intent.Image, "a(b", "", "regular expression"},
		{"caret inside a phrase", intent.Image, "^pic", "", "regular expression"},
		{"star not at the end", intent.Image, "p*c", "", "only at the end"},
		{"one CJK character", intent.Image, "絵", "", "two characters"},
		{"empty", intent.Image, "   ", "", "empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := intent.CheckCustom(c.target, c.phrase)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("= %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestCompileCustomLimits(t *testing.T) {
	phrases := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, "word"+strings.Repeat("x", i))
		}
		return out
	}
	if _, err := intent.CompileCustom(map[string][]string{intent.Image: phrases(intent.MaxCustomPerTarget)}); err != nil {
		t.Errorf("%d triggers: %v", intent.MaxCustomPerTarget, err)
	}
	if _, err := intent.CompileCustom(map[string][]string{intent.Image: phrases(intent.MaxCustomPerTarget + 1)}); err == nil || !strings.Contains(err.Error(), "at most 16") {
		t.Errorf("%d triggers: err = %v", intent.MaxCustomPerTarget+1, err)
	}
	if _, err := intent.CompileCustom(map[string][]string{"pictures": {"pic"}}); err == nil {
		t.Error("unknown target accepted")
	}
	if _, err := intent.CompileCustom(map[string][]string{intent.Image: {"a|b"}}); err == nil {
		t.Error("regex syntax accepted")
	}
	c, err := intent.CompileCustom(nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := detector(t).Detect(intent.Input{Text: "hello", Custom: c}); len(r.Targets) != 0 {
		t.Errorf("no custom triggers opened %v", r.Targets)
	}
}
