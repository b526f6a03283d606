// Package mcpclient connects user-registered remote MCP servers and offers
// their tools to turns.
//
// A [Service] owns the registrations of every organisation (stored through
// store.MCPServers, auth tokens sealed with a secret.Keyring) and a pool of
// live connections. Adding a server is all-or-nothing: fields are validated,
// the typed-family and slot rules checked, the URL checked against the
// network policy, the server connected and its tools discovered, and only
// then is the registration stored. Listing reads stored metadata only.
//
// At the start of a turn, [Service.Overlay] turns the organisation's enabled
// servers into a registry.Overlay: their tools, each under its wire name
// "<server>__<tool>" ([WireName]), which depends on the server's and the
// tool's names only, so servers never compete for a name and registering
// another renames nothing; and the built-in tools that typed servers
// replace (web_search, fetch_url), which never come back silently when the
// replacement is unavailable. A call is sent to the server under the
// tool's real name.
//
// Every request goes through the guarded client (netguard): redirects are
// refused, the bearer token is sent only to the registered origin, and in
// public mode only HTTPS to public addresses is allowed. Connect, call and
// idle timeouts, a cooldown after a failed connect and a response size cap
// keep a dead or hostile server from stalling turns.
//
// The network mode is an organisation's: Config.ModeFor names it (the
// deployment's mode when nil), and it decides everything about that
// organisation's registrations — Add's checks and connection test, the
// connects of Overlay, the re-check before each call and the vetting of
// URL arguments. A pooled session is keyed by mode too: after a change of
// mode it is closed without a further request and never reused, and a turn
// routed under the old mode has its calls refused. A mode that cannot be
// determined leaves the organisation's servers out; it never falls back to
// another mode. Probe and CallFixed belong to no organisation and use the
// deployment's mode.
package mcpclient
