package settings

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/quiverhq/quiver/tmpl"
)

// validate checks an update against the deployment's ceiling and returns
// the document it stores. Every fault is an *InvalidError; when several
// fields are wrong, the first in the order below (and, within a map, by
// name) is reported.
func (s *Service) validate(ctx context.Context, u Update) (document, error) {
	known := tmpl.KnownCapabilities()
	for _, name := range slices.Sorted(maps.Keys(u.Switches)) {
		if !slices.Contains(known, name) {
			return document{}, invalid("switches", fmt.Sprintf("%q is not a switch (known: %s)", name, strings.Join(known, ", ")))
		}
	}
	if err := s.checkMode(u.NetworkMode); err != nil {
		return document{}, err
	}
	if err := s.checkWeb(u); err != nil {
		return document{}, err
	}
	if err := checkKeyChanges(u.SetKeys, u.ClearKeys); err != nil {
		return document{}, err
	}
	if err := s.checkConnections(ctx, u); err != nil {
		return document{}, err
	}
	return s.document(u), nil
}

// checkMode refuses a network mode the deployment does not offer.
func (s *Service) checkMode(mode string) error {
	if slices.Contains(s.modes(), mode) {
		return nil
	}
	if mode == "self-hosted" {
		return invalid("network_mode", "this deployment allows only public mode (set network.mode: self-hosted in the server's config file to allow it)")
	}
	return invalid("network_mode", fmt.Sprintf("%q is not one of %s", mode, strings.Join(s.modes(), ", ")))
}

// checkWeb checks the web engines: the deployment's switches-off stay off,
// URLs are http(s) without credentials, an IAsk URL of the organisation's
// own is https unless the organisation is self-hosted, and excluded
// providers are provider names.
func (s *Service) checkWeb(u Update) error {
	b := s.base.Web
	if b.Disabled && !u.Web.Disabled {
		return invalid("web.disabled", "web search is turned off for this deployment (web.disabled in the server's config file)")
	}
	if b.DuckDuckGoDisabled && !u.Web.DuckDuckGoDisabled {
		return invalid("web.duckduckgo_disabled", "DuckDuckGo is turned off for this deployment (web.duckduckgo_disabled in the server's config file)")
	}
	for _, f := range []struct{ field, raw string }{{"web.searxng_url", u.Web.SearXNGURL}, {"web.iask_url", u.Web.IAskURL}} {
		if err := checkEngineURL(f.raw); err != nil {
			return invalid(f.field, err.Error())
		}
	}
	if u.Web.IAskURL != "" && u.Web.IAskURL != b.IAskURL && u.NetworkMode != "self-hosted" && !strings.HasPrefix(u.Web.IAskURL, "https://") {
		return invalid("web.iask_url", "use https (it carries the IAsk key); plain http needs network mode self-hosted")
	}
	for _, p := range u.Web.ExcludeProviders {
		if !providerName.MatchString(p) {
			return invalid("web.exclude_providers", fmt.Sprintf("%q is not a model provider name (like openai or ollama)", p))
		}
	}
	return nil
}

// document is the stored form of a valid update: only what differs from
// the deployment's configuration.
func (s *Service) document(u Update) document {
	b := s.base.Web
	sw := maps.Clone(u.Switches)
	if sw == nil {
		sw = map[string]bool{}
	}
	doc := document{Switches: sw, Web: webDoc{
		Disabled:           override(u.Web.Disabled, b.Disabled),
		SearXNGURL:         override(u.Web.SearXNGURL, b.SearXNGURL),
		IAskURL:            override(u.Web.IAskURL, b.IAskURL),
		DuckDuckGoDisabled: override(u.Web.DuckDuckGoDisabled, b.DuckDuckGoDisabled),
	}}
	if u.NetworkMode != s.baseMode() {
		doc.NetworkMode = u.NetworkMode
	}
	doc.Connections = connectionDocs(u.Connections)
	ex := slices.Compact(slices.Sorted(slices.Values(u.Web.ExcludeProviders)))
	if !slices.Equal(ex, slices.Compact(slices.Sorted(slices.Values(b.ExcludeProviders)))) {
		if ex == nil {
			ex = []string{} // stored as [], not null (which would follow the deployment)
		}
		doc.Web.ExcludeProviders = &ex
	}
	return doc
}

// checkEngineURL accepts "" or an http(s) URL without credentials.
func checkEngineURL(raw string) error {
	if raw == "" {
		return nil
	}
	if len(raw) > maxURLLen {
		return fmt.Errorf("longer than %d characters", maxURLLen)
	}
	// The settings are stored as JSON, which would turn bytes that are
	// not UTF-8 into U+FFFD: a URL saved would not be the URL sent.
	if !utf8.ValidString(raw) {
		return errors.New("not valid UTF-8")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http or https URL")
	}
	if u.User != nil {
		return errors.New("credentials in the URL are not allowed (use the key fields)")
	}
	return nil
}

// checkKeyChanges checks names and values of key changes.
func checkKeyChanges(set map[string]string, clear []string) error {
	known := func(name string) bool {
		return slices.ContainsFunc(keySpecs, func(k keySpec) bool { return k.name == name })
	}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		value := set[name]
		switch {
		case !known(name):
			return invalid("set_keys", fmt.Sprintf("%q is not a key name", name))
		case strings.TrimSpace(value) == "":
			return invalid("set_keys", name+" is empty (use clear_keys to remove a key)")
		case len(value) > maxKeyLen:
			return invalid("set_keys", fmt.Sprintf("%s is longer than %d characters", name, maxKeyLen))
		case strings.ContainsAny(value, "\r\n"):
			return invalid("set_keys", name+" must be one line")
		}
	}
	for _, name := range clear {
		if !known(name) {
			return invalid("clear_keys", fmt.Sprintf("%q is not a key name", name))
		}
		if _, ok := set[name]; ok {
			return invalid("", name+" is both set and cleared")
		}
	}
	return nil
}
