// Package app is Quiver's composition root and its commands: it builds the
// catalog, stores, engine and HTTP API from configuration, and runs each
// command (Chat, Call, Serve, ...) from a typed options struct, validating
// what only it can (the agent file, the timezone, a conversation's owner)
// before anything is written. internal/cli turns the command line into
// those options.
package app
