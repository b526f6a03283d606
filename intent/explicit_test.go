package intent_test

import (
	"slices"
	"testing"

	"github.com/quiverhq/quiver/intent"
)

// TestExplicitRequestsSurviveTheVeto: a plain, explicit request opens
// its family with the packs and the classifier together, so a veto (a
// pack's phrase counted only when the classifier agrees enough) never
// turns away someone who says exactly what they want. These lines are
// not in the corpus.
func TestExplicitRequestsSurviveTheVeto(t *testing.T) {
	c, err := intent.BuiltinClassifier()
	if err != nil {
		t.Fatal(err)
	}
	d := detector(t).WithClassifier(c, 0)
	for _, tc := range []struct{ text, want string }{
		{"search the web for cats", intent.Search},
		{"look up the opening hours of the Louvre", intent.Search},
		{"remind me at 6pm to water the plants", intent.Reminder},
		{"remember that my sister is called Ana", intent.Memory},
		{"draw a fox reading a newspaper", intent.Image},
		{"make a short video of waves at sunset", intent.Video},
		{"send me that as a voice message", intent.Voice},
		{"describe this photo for me", intent.MediaAnalysis},
		{"pin the last message", intent.MessageAction},
		{"post this in the announcements channel", intent.CrossChannel},
		{"start a thread about the camping trip", intent.Thread},
		{"block that user", intent.UserBlocking},
		{"call me Sam from now on", intent.UserInfo},
		{"what can you do?", intent.Capabilities},
		{"calculate 17% of 2,340", intent.Calculator},
		{"save this as shopping.md in my files", intent.Files},
		{"what does the employee handbook say about sick days", intent.Knowledge},
		{"find the delivery date in the PDF I attached", intent.Attachments},
		{"how much of my budget is left this month", intent.Budget},
		{"what did we talk about last week about my CV", intent.History},
		{"such im Internet nach dem Wetter in Köln", intent.Search},
		{"nhắc tôi 7 giờ sáng mai gọi cho mẹ", intent.Reminder},
		{"画一只戴帽子的猫", intent.Image},
	} {
		if got := d.Detect(intent.Input{Text: tc.text}).Targets; !slices.Contains(got, tc.want) {
			t.Errorf("%q opens %v, want %s", tc.text, got, tc.want)
		}
	}
}
