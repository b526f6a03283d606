package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/netguard"
)

// TestBoundsConfig: the turns and http sections parse into their limits,
// and a value out of range is one error naming its key.
func TestBoundsConfig(t *testing.T) {
	tests := []struct {
		name, yaml, wantErr string
	}{
		{"full", "turns: {model_idle: 45s, max_duration: 20m, max_per_user: 2, max_per_server: 50, admit_wait: 3s}\nhttp: {read_header_timeout: 5s, read_timeout: 20s, idle_timeout: 30s, max_header_bytes: 32768}\n", ""},
		{"idle too short", "turns: {model_idle: 10ms}\n", "turns.model_idle: use a duration from 1s to 24h"},
		{"duration too long", "turns: {max_duration: 25h}\n", "turns.max_duration"},
		{"admit wait too short", "turns: {admit_wait: 10ms}\n", "turns.admit_wait: use a duration from 100ms to 1m"},
		{"admit wait too long", "turns: {admit_wait: 2m}\n", "turns.admit_wait"},
		{"negative per user", "turns: {max_per_user: -1}\n", "turns.max_per_user -1"},
		{"per user above per server", "turns: {max_per_user: 10, max_per_server: 5}\n", "cannot be above turns.max_per_server"},
		{"negative idle timeout", "http: {idle_timeout: -1s}\n", "http.idle_timeout"},
		{"tiny headers", "http: {max_header_bytes: 100}\n", "http.max_header_bytes 100"},
		{"unknown key", "http: {write_timeout: 5s}\n", `unknown key "write_timeout"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.ParseConfig([]byte(tc.yaml))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	cfg, err := config.ParseConfig([]byte(tests[0].yaml))
	if err != nil {
		t.Fatal(err)
	}
	want := netguard.ServerLimits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 20 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 32768}
	if diff := cmp.Diff(want, cfg.HTTP.Limits()); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
}
