package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/config"
)

// TestCode: code.level is js (the default) or python, and each limit
// lies in the sandbox's range; anything else is one error naming it.
func TestCode(t *testing.T) {
	for yaml, want := range map[string]string{
		"code:\n  level: python\n  wall: 20s\n  memory_bytes: 268435456\n  output_bytes: 1000\n  cpu: 5s\n  processes: 8\n": "",
		"code:\n  level: ruby\n":            "code.level",
		"code:\n  wall: 2m\n":               "wall limit 2m0s is out of range",
		"code:\n  memory_bytes: 1024\n":     "memory limit 1024 bytes is out of range",
		"code:\n  memory_bytes: -1\n":       "code.memory_bytes",
		"code:\n  output_bytes: 99999999\n": "output limit 99999999 bytes is out of range",
		"code:\n  cpu: 2m\n":                "code.cpu",
		"code:\n  processes: 5000\n":        "code.processes",
		"code:\n  shell: /bin/sh\n":         "shell",
	} {
		c, err := config.ParseConfig([]byte(yaml))
		switch {
		case want == "" && err != nil:
			t.Errorf("ParseConfig(%q): %v", yaml, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("ParseConfig(%q) = %v, want an error naming %s", yaml, err, want)
		case want == "" && (c.Code.Level != "python" || c.Code.Limits().Wall != 20*time.Second || c.Code.Limits().OutputBytes != 1000):
			t.Errorf("ParseConfig(%q) = %+v", yaml, c.Code)
		}
	}
}
