// Command train fits Deliberate Tool Mode's classifier on the labelled
// corpus and writes its weights, which the intent package embeds:
//
//	go run ./intent/train
//
// It reads intent/testdata/corpus/train/*.jsonl and the older labelled
// set intent/testdata/eval/*.jsonl (which the phrase packs were tuned on,
// so it can only train) for training, intent/testdata/corpus/validation
// for the thresholds, and writes intent/classifier.bin. The same corpus
// gives the same bytes (TestClassifierWeightsAreFresh fails when the
// committed file is stale). The test split is never read here.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/quiverhq/quiver/intent"
)

func main() {
	dir := flag.String("dir", "intent", "the intent package's folder")
	flag.Parse()
	c, err := intent.TrainFromCorpus(os.DirFS(*dir))
	if err != nil {
		log.Fatal(err)
	}
	b, err := c.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(*dir, "classifier.bin")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %s: %d bytes, families %v\n", out, len(b), c.Labels())
}
