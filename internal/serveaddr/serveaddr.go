// Package serveaddr is where people reach a `quiver serve`: the address
// its last start listened on, which it records in the data folder, unless
// the configuration's server.public_url says otherwise (a server behind a
// proxy). quiver login-link reads it, so that the link it prints opens the
// server that is actually running, not an assumed 127.0.0.1:8080.
package serveaddr

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// FileName is the file in the data folder that holds the base URL the
// last start of quiver serve listened on, one line.
const FileName = "serve-address"

// maxFile bounds what Base reads of the file.
const maxFile = 1024

// Listening is the base URL ("http://HOST:PORT") of a server listening
// on addr, for links opened on this machine: an unspecified host
// (0.0.0.0, ::) is given as the loopback address of its family.
func Listening(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Links is the prefix of the links a server listening on addr prints:
// publicURL when set (without a trailing slash), else Listening(addr).
func Links(publicURL string, addr net.Addr) string {
	if publicURL != "" {
		return strings.TrimSuffix(publicURL, "/")
	}
	return Listening(addr)
}

// Record writes base to dir's FileName (creating dir, mode 0700, when
// missing), replacing what a previous start wrote in one step (a file
// renamed over it), readable by the owner alone.
func Record(dir, base string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("record the serve address: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+FileName+"-*")
	if err != nil {
		return fmt.Errorf("record the serve address: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := io.WriteString(tmp, base+"\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("record the serve address: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("record the serve address: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, FileName)); err != nil {
		return fmt.Errorf("record the serve address: %w", err)
	}
	return nil
}

// DefaultAddr is where quiver serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8080"

// Base is the prefix of the links people open: http://addr when addr (a
// HOST:PORT the person gave) is set, else publicURL when set (the
// configuration's server.public_url, validated there), else the address
// dir's FileName recorded, else http://DefaultAddr (no server ever
// started there). A recorded file that cannot be read, or does not hold
// an http URL of a host, is an error naming it.
func Base(dir, addr, publicURL string) (string, error) {
	switch {
	case addr != "":
		return "http://" + addr, nil
	case publicURL != "":
		return strings.TrimSuffix(publicURL, "/"), nil
	}
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "http://" + DefaultAddr, nil
	}
	if err != nil {
		return "", fmt.Errorf("read the serve address: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return "", fmt.Errorf("read the serve address: %w", err)
	}
	base := strings.TrimSpace(string(b))
	if u, err := url.Parse(base); err != nil || u.Scheme != "http" || u.Host == "" || u.Path != "" {
		return "", fmt.Errorf("%s does not hold the address quiver serve listened on (%q); start quiver serve again, or pass --addr", path, base)
	}
	return base, nil
}
