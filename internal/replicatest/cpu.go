package replicatest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/internal/procstat"
)

// ProcessCPU is the CPU time process pid has used (procstat.ProcessCPU).
func ProcessCPU(pid int) (time.Duration, error) { return procstat.ProcessCPU(pid) }

// SelfCPU is the CPU time this process (the test binary: fake model and
// clients) has used.
func SelfCPU() time.Duration { return procstat.SelfCPU() }

// BackendPIDs are the server processes of every session on conn's
// database other than conn's own: on a server on this machine, whose
// CPU ProcessCPU reads.
func BackendPIDs(tb testing.TB, conn *pgx.Conn) []int {
	tb.Helper()
	rows, err := conn.Query(context.Background(),
		`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		tb.Fatalf("replicatest: list the database's sessions: %v", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		tb.Fatalf("replicatest: list the database's sessions: %v", err)
	}
	out := make([]int, len(pids))
	for i, p := range pids {
		out[i] = int(p)
	}
	return out
}
