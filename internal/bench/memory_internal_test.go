package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dumpBefore and dumpAfter are runtime.Stack dumps as the probe reads
// them: after has two pooled connections more (a reader and a writer
// goroutine each) and one goroutine that moved from one place to another.
const (
	dumpBefore = `goroutine 1 [select]:
github.com/quiverhq/quiver/httpapi.Serve(0xc0001, {0x2, 0x3})
	/src/httpapi/serve.go:60 +0x3b4
main.main()
	/src/cmd/quiver/main.go:22 +0x2f1

goroutine 18 [chan receive]:
github.com/quiverhq/quiver/runs.(*Registry).Loop.func1()
	/src/runs/loop.go:61 +0xe4
created by sync.(*WaitGroup).Go in goroutine 1
	/usr/local/go/src/sync/waitgroup.go:258 +0x49

goroutine 19 [IO wait]:
internal/poll.runtime_pollWait(0x7f, 0x72)
	/usr/local/go/src/runtime/netpoll.go:351 +0x85
created by net/http.(*Server).Serve in goroutine 1
	/usr/local/go/src/net/http/server.go:3454 +0x485
`
	dumpAfter = dumpBefore + `
goroutine 71 [IO wait]:
internal/poll.runtime_pollWait(0x7f, 0x72)
	/usr/local/go/src/runtime/netpoll.go:351 +0x85
net/http.(*persistConn).readLoop(0xc0007)
	/usr/local/go/src/net/http/transport.go:2330 +0x171
created by net/http.(*Transport).dialConn in goroutine 70
	/usr/local/go/src/net/http/transport.go:1947 +0x174c

goroutine 72 [select]:
net/http.(*persistConn).writeLoop(0xc0007)
	/usr/local/go/src/net/http/transport.go:2652 +0xe5
created by net/http.(*Transport).dialConn in goroutine 70
	/usr/local/go/src/net/http/transport.go:1948 +0x17b0

goroutine 73 [IO wait]:
internal/poll.runtime_pollWait(0x7f, 0x72)
	/usr/local/go/src/runtime/netpoll.go:351 +0x85
created by net/http.(*Transport).dialConn in goroutine 12
	/usr/local/go/src/net/http/transport.go:1947 +0x174c

goroutine 74 [select]:
net/http.(*persistConn).writeLoop(0xc0009)
	/usr/local/go/src/net/http/transport.go:2652 +0xe5
created by net/http.(*Transport).dialConn in goroutine 12
	/usr/local/go/src/net/http/transport.go:1948 +0x17b0
`
)

// TestStackKinds: goroutines are counted by the function they wait in and
// the one that started them, whatever their arguments and ids, and
// stacksLeft names the kinds a later dump has more of.
func TestStackKinds(t *testing.T) {
	before := stackKinds([]byte(dumpBefore))
	want := map[string]int{
		"github.com/quiverhq/quiver/httpapi.Serve":                                       1,
		"github.com/quiverhq/quiver/runs.(*Registry).Loop.func1 <- sync.(*WaitGroup).Go": 1,
		"internal/poll.runtime_pollWait <- net/http.(*Server).Serve":                     1,
	}
	if diff := cmp.Diff(want, before); diff != "" {
		t.Errorf("stackKinds(before) (-want +got):\n%s", diff)
	}
	left := stacksLeft(before, stackKinds([]byte(dumpAfter)))
	wantLeft := map[string]int{
		"internal/poll.runtime_pollWait <- net/http.(*Transport).dialConn":    2,
		"net/http.(*persistConn).writeLoop <- net/http.(*Transport).dialConn": 2,
	}
	if diff := cmp.Diff(wantLeft, left); diff != "" {
		t.Errorf("stacksLeft (-want +got):\n%s", diff)
	}
	if left := stacksLeft(before, before); left != nil {
		t.Errorf("stacksLeft of a dump against itself: %v, want nil", left)
	}
}

// TestReadRuntimeCountsStacks: the probe's figures count every goroutine
// in Stacks.
func TestReadRuntimeCountsStacks(t *testing.T) {
	f := readRuntime()
	n := 0
	for _, c := range f.Stacks {
		n += c
	}
	// Goroutines may start or end between the two reads; the test's own
	// goroutine is in both.
	if n == 0 || f.Goroutines == 0 {
		t.Errorf("figures %+v: want goroutines counted by stack", f)
	}
}
