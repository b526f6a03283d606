// Package app is Quiver's composition root: it builds the catalog, stores and
// dispatcher from configuration and runs the CLI commands on them.
package app
