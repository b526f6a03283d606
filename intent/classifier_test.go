package intent_test

import (
	"bytes"
	"math"
	"os"
	"testing"

	"github.com/quiverhq/quiver/intent"
)

// TestClassifierWeightsAreFresh: the committed weights are what
// `go run ./intent/train` makes of the committed corpus, byte for byte.
func TestClassifierWeightsAreFresh(t *testing.T) {
	if raceDetector {
		// Training is single-threaded and deterministic; under the race
		// detector it takes a minute and proves nothing the plain runs
		// do not.
		t.Skip("training has no concurrency; the plain test runs check freshness")
	}
	c, err := intent.TrainFromCorpus(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("classifier.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Fatal("intent/classifier.bin is stale: run go run ./intent/train and commit it")
	}
	if _, err := intent.BuiltinClassifier(); err != nil {
		t.Fatalf("the embedded weights do not parse: %v", err)
	}
}

// TestTrainIsDeterministic: two trainings of one corpus give the same
// bytes.
func TestTrainIsDeterministic(t *testing.T) {
	exs := []intent.Example{
		{Text: "search the web for cats", Labels: []string{"search"}},
		{Text: "remind me at 5", Labels: []string{"reminder"}},
		{Text: "hello there", Labels: nil},
		{Text: "look up the weather", Labels: []string{"search"}},
	}
	a, _ := intent.Train(exs, exs, intent.TrainOptions{Bits: 10, Epochs: 5}).MarshalBinary()
	b, _ := intent.Train(exs, exs, intent.TrainOptions{Bits: 10, Epochs: 5}).MarshalBinary()
	if !bytes.Equal(a, b) {
		t.Fatal("two trainings differ")
	}
	c, err := intent.ParseClassifier(a)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Labels(); len(got) != 2 || got[0] != "reminder" || got[1] != "search" {
		t.Fatalf("labels %v", got)
	}
	scores := c.Scores("please search the web for dogs")
	if scores[1].Target != "search" || scores[1].Score <= scores[0].Score {
		t.Fatalf("scores %v: search should lead", scores)
	}
}

// FuzzParseClassifier: any bytes are refused or read, never a panic.
func FuzzParseClassifier(f *testing.F) {
	exs := []intent.Example{{Text: "search cats", Labels: []string{"search"}}, {Text: "hi"}}
	good, _ := intent.Train(exs, exs, intent.TrainOptions{Bits: 4, Epochs: 1}).MarshalBinary()
	f.Add(good)
	f.Add([]byte("QDTMC4\n"))
	f.Add(append([]byte("QDTMC4\n"), 20, 1, 1, 'x'))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := intent.ParseClassifier(b)
		if err != nil {
			return
		}
		_ = c.Scores("search the web")
	})
}

// TestClassifierHidesItsRequestLabel: the any-request regression the
// vetoes are judged on is no family: not listed, not scored, no bars,
// and a NaN shift (read as 0) opens nothing for plain chat.
func TestClassifierHidesItsRequestLabel(t *testing.T) {
	c, err := intent.BuiltinClassifier()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range c.Labels() {
		if l == "*" {
			t.Error("Labels lists the any-request label")
		}
	}
	if len(c.Scores("hello")) != len(c.Labels()) {
		t.Error("Scores and Labels differ in length")
	}
	if _, _, ok := c.Threshold("*"); ok {
		t.Error("Threshold answers for the any-request label")
	}
	d := intent.New(nil).WithClassifier(c, math.NaN())
	if got := d.Detect(intent.Input{Text: "hello, how are you?"}).Targets; len(got) != 0 {
		t.Errorf("a NaN shift opens %v for plain chat", got)
	}
}
