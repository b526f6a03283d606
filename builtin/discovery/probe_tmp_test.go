package discovery_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/builtin/discovery"
)

func TestProbeTmp(t *testing.T) {
	q := os.Getenv("PROBE")
	if q == "" {
		t.Skip()
	}
	ix, _ := discovery.NewIndex(context.Background(), catalog150(t))
	for _, l := range strings.Split(q, "\n") {
		got, _ := ix.Search(context.Background(), l, 5)
		fmt.Printf("%-50s %v\n", l, got)
	}
}
