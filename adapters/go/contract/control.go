package contract

import (
	"net/http"
	"sync"

	"ahp-interop/adapters/go/sdk"
)

// Control is the control listener's handler: /health, /receipts, /release,
// /reset, /shutdown (plain HTTP on loopback, no auth).
type Control struct {
	Backend *Backend
	once    sync.Once
	done    chan struct{}
}

// NewControl makes the handler; Done closes at POST /shutdown.
func NewControl(b *Backend) *Control { return &Control{Backend: b, done: make(chan struct{})} }

// Done is closed once shutdown was asked for.
func (c *Control) Done() <-chan struct{} { return c.done }

// Stop closes Done (idempotent).
func (c *Control) Stop() { c.once.Do(func() { close(c.done) }) }

func (c *Control) body(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	data, status := readBody(w, r)
	if status != 0 {
		w.WriteHeader(status)
		return nil, false
	}
	if len(data) == 0 {
		return map[string]any{}, true
	}
	v, err := sdk.Decode(data)
	m, isObject := v.(map[string]any)
	if err != nil || !isObject {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "body must be a JSON object"})
		return nil, false
	}
	return m, true
}

func (c *Control) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.Path
	switch route {
	case "GET /health":
		writeJSON(w, http.StatusOK, map[string]any{"ready": true})
	case "GET /receipts":
		writeJSON(w, http.StatusOK, c.Backend.Receipts.Snapshot())
	case "POST /release":
		m, ok := c.body(w, r)
		if !ok {
			return
		}
		name, isString := m["barrier"].(string)
		if !isString {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "barrier must be a string"})
			return
		}
		c.Backend.Barriers.Release(name)
		writeJSON(w, http.StatusOK, map[string]any{"released": name})
	case "POST /reset":
		m, ok := c.body(w, r)
		if !ok {
			return
		}
		file, _ := m["scenarioFile"].(string)
		if err := c.Backend.Reset(file); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"reset": true})
	case "POST /shutdown":
		c.Backend.Barriers.ReleaseAll()
		writeJSON(w, http.StatusOK, map[string]any{"shutdown": true})
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		c.Stop()
	default:
		http.NotFound(w, r)
	}
}
