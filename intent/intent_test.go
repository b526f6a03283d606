package intent_test

import (
	"testing"

	"github.com/quiverhq/quiver/intent"
)

func detector(t testing.TB) *intent.Detector {
	t.Helper()
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	return intent.New(packs)
}

func TestEnglishBasics(t *testing.T) {
	d := detector(t)
	cases := []struct {
		msg  string
		want []string
	}{
		{"remind me to call Bob at 5pm", []string{intent.Reminder}},
		{"draw a picture of a fox at sunset", []string{intent.Image}},
		{"make a video of a cat", []string{intent.Video}},
		{"I forgot my password", nil},
		{"save the image please", nil},
		{"what model are you currently using?", []string{intent.Capabilities}},
		{"why can't you search the web?", []string{intent.Capabilities}},
		{"can you search for the latest Go release?", []string{intent.Search}},
		{"nice pictures!", nil},
		{"I have a reminder app", []string{intent.Reminder}},
		{"hello, how are you?", nil},
	}
	for _, c := range cases {
		got := d.Detect(intent.Input{Text: c.msg}).Targets
		if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
			t.Errorf("%q: got %v, want %v", c.msg, got, c.want)
		}
	}
}
