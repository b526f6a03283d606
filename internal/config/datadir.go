package config

import (
	"errors"
	"path/filepath"
)

// DataDirEnv names the environment variable holding the data folder.
const DataDirEnv = "QUIVER_DATA"

// DataDir is the data folder: flagValue when given, else $QUIVER_DATA,
// else $XDG_DATA_HOME/quiver, else $HOME/.local/share/quiver; getenv
// reads the environment. With none of them it is an error.
func DataDir(flagValue string, getenv func(string) string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if d := getenv(DataDirEnv); d != "" {
		return d, nil
	}
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "quiver"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("no data folder: set --data or QUIVER_DATA")
	}
	return filepath.Join(home, ".local", "share", "quiver"), nil
}
