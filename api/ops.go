package api

import "net/http"

// Ops serves the operator's probes (metrics.Metrics).
type Ops interface {
	// Handler serves /metrics, behind the API's authentication.
	Handler() http.Handler
	// Ready serves /readyz, open like /healthz: it says ready or not
	// ready and nothing else.
	Ready() http.Handler
}
