package replicatest_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/internal/replicatest"
)

// benchClients is how many clients send turns at once: each round of a
// benchmark is one turn per client, all sent together, and the round
// ends when the last one is done.
const benchClients = 8

// turnsPerUser is how many turns a user sends before the benchmark
// rotates to new users: under the API's per-user burst of 10 messages,
// so that no turn waits for the rate limit.
const turnsPerUser = 8

// BenchmarkReplicaTurns measures turns per second through real quiver
// serve processes against the fake model, for SQLite, PostgreSQL with one
// replica and PostgreSQL with two (each client's turns alternate between
// them). One op is a round of benchClients concurrent turns, half of them
// a plain answer, half a calculate call and an answer (two model
// requests). Reported: turns/s, turn latency p50/p99 (client's send to
// done), and the CPU each turn cost quiver serve, PostgreSQL's server
// processes and the test binary (fake model and clients). The whole
// machine is shared by all three: on two cores, two replicas measure the
// cost of coordinating through the database, not scale-out.
//
//	go test -run '^$' -bench BenchmarkReplicaTurns -benchtime 50x ./internal/replicatest
func BenchmarkReplicaTurns(b *testing.B) {
	for _, v := range []struct {
		name     string
		postgres bool
		replicas int
	}{
		{"sqlite", false, 1},
		{"postgres-1", true, 1},
		{"postgres-2", true, 2},
	} {
		b.Run(v.name, func(b *testing.B) {
			o := replicatest.Options{}
			if v.postgres {
				o.DatabaseURL = pgtest.URL(b)
			}
			e := newTurnBench(b, o, v.replicas)
			e.run(b, func(client int) string {
				if client%2 == 1 {
					return replicatest.CalcPrefix + fmt.Sprintf("%d * 3 + 1", client)
				}
				return fmt.Sprintf("hello from client %d", client)
			})
		})
	}
}

// BenchmarkTurnDatabaseWork counts what one turn costs PostgreSQL: one
// replica's sessions go through a replicatest.WireCounter, which reports
// statements, round trips, statements prepared and bytes sent per turn,
// for a plain answer ("text", one model request) and a tool call
// ("tool", two model requests and a tool result). These counts do not
// depend on the machine: with the CPU per turn they say what N replicas
// would ask of one database.
//
//	go test -run '^$' -bench BenchmarkTurnDatabaseWork -benchtime 20x ./internal/replicatest
func BenchmarkTurnDatabaseWork(b *testing.B) {
	for _, v := range []struct {
		name    string
		message func(client int) string
	}{
		{"text", func(client int) string { return fmt.Sprintf("hello from client %d", client) }},
		{"tool", func(client int) string { return replicatest.CalcPrefix + fmt.Sprintf("%d + 1", client) }},
	} {
		b.Run(v.name, func(b *testing.B) {
			direct := pgtest.URL(b)
			counter, url := replicatest.StartWireCounter(b, direct)
			e := newTurnBench(b, replicatest.Options{DatabaseURL: url}, 1)
			// The benchmark's own queries (BackendPIDs) bypass the counter.
			e.conn = replicatest.Connect(b, direct)
			e.counter, e.byStatement = counter, map[string]int64{}
			e.run(b, v.message)
		})
	}
}

// turnBench is a benchmark's cluster, its users and what it measured.
type turnBench struct {
	c        *replicatest.Cluster
	replicas []*replicatest.Replica
	admin    *replicatest.Client
	conn     *pgx.Conn // PostgreSQL only
	counter  *replicatest.WireCounter

	users []benchUser // by client
	used  int         // turns each current user has sent

	latencies            []time.Duration
	turns                int
	quiver, server, self time.Duration
	wire                 replicatest.WireCounts
	byStatement          map[string]int64 // with a counter
}

// benchUser is a user with an API token on each replica and a
// conversation.
type benchUser struct {
	onReplica []*replicatest.Client
	conv      string
}

// newTurnBench starts n replicas of a cluster with the fake model not
// recording requests, and signs the admin in.
func newTurnBench(b *testing.B, o replicatest.Options, n int) *turnBench {
	e := &turnBench{c: replicatest.New(b, o)}
	e.c.Model.Record(false)
	for range n {
		e.replicas = append(e.replicas, e.c.Start())
	}
	e.admin = e.c.Admin(e.replicas[0])
	if o.DatabaseURL != "" {
		e.conn = e.c.Conn()
	}
	return e
}

// run is the benchmark loop: one round of concurrent turns per op, with
// new users every turnsPerUser rounds (outside the timer), then the
// metrics.
func (e *turnBench) run(b *testing.B, message func(client int) string) {
	round := 0
	for b.Loop() {
		if e.users == nil || e.used == turnsPerUser {
			b.StopTimer()
			e.newUsers(b)
			b.StartTimer()
		}
		e.round(b, round, message)
		e.used++
		round++
	}
	e.report(b)
}

// newUsers makes benchClients new members, each with an API token (valid
// on every replica: tokens live in the database) and a conversation.
func (e *turnBench) newUsers(b *testing.B) {
	e.users, e.used = make([]benchUser, benchClients), 0
	for i := range e.users {
		var made struct {
			LoginLink string `json:"login_link"`
		}
		e.admin.JSON(http.MethodPost, "/api/users", map[string]string{"display_name": fmt.Sprintf("Bench %d", i)}, http.StatusCreated, &made)
		tok := e.c.SignIn(e.replicas[0], made.LoginLink).NewToken("bench")
		u := benchUser{conv: tok.NewConversation("assistant")}
		for _, r := range e.replicas {
			u.onReplica = append(u.onReplica, tok.At(r))
		}
		e.users[i] = u
	}
}

// round sends one turn per client at once, client i's on replica
// (i + round) mod n, and waits for all; it samples the counters around
// the turns only.
func (e *turnBench) round(b *testing.B, round int, message func(int) string) {
	before := e.sample(b)
	lat := make([]time.Duration, len(e.users))
	errs := make([]error, len(e.users))
	var wg sync.WaitGroup
	for i, u := range e.users {
		cl := u.onReplica[(i+round)%len(u.onReplica)]
		wg.Go(func() {
			start := time.Now()
			_, errs[i] = cl.TrySend(context.Background(), u.conv, message(i))
			lat[i] = time.Since(start)
		})
	}
	wg.Wait()
	after := e.sample(b)
	for i, err := range errs {
		if err != nil {
			b.Fatalf("round %d, client %d: %v", round, i, err)
		}
	}
	e.latencies = append(e.latencies, lat...)
	e.turns += len(lat)
	e.quiver += after.quiver - before.quiver
	e.server += after.server - before.server
	e.self += after.self - before.self
	e.wire = e.wire.Add(after.wire.Sub(before.wire))
	for text, n := range after.byStatement {
		e.byStatement[text] += n - before.byStatement[text]
	}
}

// benchSample is the counters at one instant.
type benchSample struct {
	quiver, server, self time.Duration
	wire                 replicatest.WireCounts
	byStatement          map[string]int64
}

// sample reads the replicas' and the database server's CPU, the test
// binary's, and the wire counts.
func (e *turnBench) sample(b *testing.B) benchSample {
	s := benchSample{self: replicatest.SelfCPU()}
	for _, r := range e.replicas {
		if d, err := replicatest.ProcessCPU(r.Pid()); err == nil {
			s.quiver += d
		}
	}
	if e.conn != nil {
		for _, pid := range replicatest.BackendPIDs(b, e.conn) {
			if d, err := replicatest.ProcessCPU(pid); err == nil {
				s.server += d
			}
		}
	}
	if e.counter != nil {
		s.wire, s.byStatement = e.counter.Counts(), e.counter.ByStatement()
	}
	return s
}

// report writes the metrics.
func (e *turnBench) report(b *testing.B) {
	if e.turns == 0 {
		return
	}
	n := float64(e.turns)
	perTurn := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	p50, p99 := percentile(e.latencies, 0.50), percentile(e.latencies, 0.99)
	b.ReportMetric(n/b.Elapsed().Seconds(), "turns/s")
	b.ReportMetric(ms(p50), "turn-p50-ms")
	b.ReportMetric(ms(p99), "turn-p99-ms")
	b.ReportMetric(perTurn(e.quiver), "quiver-cpu-ms/turn")
	b.ReportMetric(perTurn(e.self), "harness-cpu-ms/turn")
	if e.conn != nil {
		b.ReportMetric(perTurn(e.server), "pg-cpu-ms/turn")
	}
	if e.counter != nil {
		b.ReportMetric(float64(e.wire.Statements)/n, "stmts/turn")
		b.ReportMetric(float64(e.wire.RoundTrips)/n, "roundtrips/turn")
		b.ReportMetric(float64(e.wire.Parses)/n, "prepares/turn")
		b.ReportMetric(float64(e.wire.Bytes)/n, "sent-B/turn")
		b.Log(statementTable(e.byStatement, n))
	}
}

// statementTable lists the statements a turn ran, most frequent first,
// with how many times per turn.
func statementTable(byStatement map[string]int64, turns float64) string {
	texts := slices.Collect(maps.Keys(byStatement))
	slices.SortFunc(texts, func(a, b string) int {
		return cmp.Or(cmp.Compare(byStatement[b], byStatement[a]), strings.Compare(a, b))
	})
	var out strings.Builder
	out.WriteString("statements per turn:\n")
	for _, text := range texts {
		if byStatement[text] > 0 {
			fmt.Fprintf(&out, "%6.2f  %s\n", float64(byStatement[text])/turns, text)
		}
	}
	return out.String()
}

// percentile is the nearest-rank p-th percentile of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[max(0, int(math.Ceil(p*float64(len(s))))-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
