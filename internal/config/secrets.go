package config

import (
	"fmt"

	"github.com/quiverhq/quiver/secret"
)

// Keyring returns the keyring the configuration names, or nil when it
// names no key source. A named source that cannot be read, or an empty
// keys_env variable, is an error naming the setting ("secrets.key_file:
// ...", "secrets.keys_env: ..."); getenv reads keys_env.
func (s Secrets) Keyring(getenv func(string) string) (*secret.Keyring, error) {
	switch {
	case s.KeyFile != "":
		kr, err := secret.LoadKeyFile(s.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("secrets.key_file: %w", err)
		}
		return kr, nil
	case s.KeysEnv != "":
		spec := getenv(s.KeysEnv)
		if spec == "" {
			return nil, fmt.Errorf("secrets.keys_env: $%s is empty", s.KeysEnv)
		}
		kr, err := secret.ParseKeys(spec)
		if err != nil {
			return nil, fmt.Errorf("secrets.keys_env $%s: %w", s.KeysEnv, err)
		}
		return kr, nil
	}
	return nil, nil
}
