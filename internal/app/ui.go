package app

import "net/http"

// uiHandler serves the web pages; nil until the web UI is wired.
func uiHandler() http.Handler { return nil }
