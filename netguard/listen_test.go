package netguard_test

import (
	"errors"
	"testing"

	"github.com/quiverhq/quiver/netguard"
)

func TestCheckListenHost(t *testing.T) {
	tests := []struct {
		name   string
		host   string
		public bool
		want   string // "" accepts
	}{
		{"IPv4 loopback", "127.0.0.1", false, ""},
		{"any of 127/8", "127.0.0.2", false, ""},
		{"IPv6 loopback", "::1", false, ""},
		{"localhost", "localhost", false, ""},
		{"every interface", "", false, "every interface is not a loopback address"},
		{"unspecified", "0.0.0.0", false, `"0.0.0.0" is not a loopback address`},
		{"private address", "192.168.1.2", false, `"192.168.1.2" is not a loopback address`},
		{"host name", "example.com", false, `"example.com" is not a loopback address`},
		{"name ending like localhost", "localhost.example.com", false, `"localhost.example.com" is not a loopback address`},
		{"public: every interface", "", true, ""},
		{"public: host name", "example.com", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := netguard.CheckListenHost(tc.host, tc.public)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("CheckListenHost(%q, %t) = %q, want %q", tc.host, tc.public, got, tc.want)
			}
			if (err != nil) != errors.Is(err, netguard.ErrNotLoopback) {
				t.Errorf("CheckListenHost(%q, %t) = %v: a refusal must wrap ErrNotLoopback", tc.host, tc.public, err)
			}
		})
	}
}
