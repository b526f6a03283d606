// Package mcpclient connects user-registered remote MCP servers and offers
// their tools to turns. It holds three things, each its own type:
//
//   - [Registrations] administers the servers an organisation registers
//     (stored through store.MCPServers, auth tokens sealed with a
//     secret.Keyring). Adding a server is all-or-nothing: fields are
//     validated, the typed-family and slot rules checked, the URL checked
//     against the network policy, the server connected and its tools
//     discovered, and only then is the registration stored. Listing reads
//     stored metadata only.
//   - [Pool] keeps the live connections: one per registration and network
//     mode, connected lazily through the guarded client of that mode, with
//     connect, call and idle timeouts, a cooldown after a failed connect
//     and a response size cap, so a dead or hostile server cannot stall
//     turns. [Pool.Probe] and [Pool.CallFixed] serve servers that are not
//     registrations (a smoke test, a deployment-configured backend) under
//     the deployment's own mode.
//   - [NewToolset] gives one turn the organisation's enabled servers as a
//     registry.Overlay: their tools, each under its wire name
//     "<server>__<tool>" ([WireName]), which depends on the server's and
//     the tool's names only, so servers never compete for a name and
//     registering another renames nothing; and the built-in tools that
//     typed servers replace (web_search, fetch_url), which never come back
//     silently when the replacement is unavailable. A call is sent to the
//     server under the tool's real name, through the pool. [TurnCatalog]
//     applies that overlay to the built-in catalog and fails closed: when
//     the registrations cannot be read, the built-ins a server may replace
//     are hidden too.
//
// Every request goes through the guarded client (netguard): redirects are
// refused, the bearer token is sent only to the registered origin, and in
// public mode only HTTPS to public addresses is allowed.
//
// The network mode is an organisation's, and it is passed in: the turn's
// mode to NewToolset, the request's to [Registrations.Add]; nothing here
// looks it up. It decides everything about that organisation's servers —
// Add's checks and connection test, a toolset's connects, the scheme check
// before each connect and the vetting of URL arguments. A mode the
// deployment does not allow (self-hosted when PoolConfig.Network's mode is
// public) is refused; it never falls back to another mode. A pooled
// session is keyed by mode too: once a toolset of the organisation
// connects under a new mode, the session of the old one is closed without
// a further request and never reused, and the calls of a toolset made
// under the old mode are refused.
package mcpclient
