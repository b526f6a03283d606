package app

import (
	"net/http"

	"github.com/quiverhq/quiver/webui"
)

// uiHandler serves the web pages (embedded assets).
func uiHandler() http.Handler { return webui.Handler() }
