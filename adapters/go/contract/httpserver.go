package contract

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"ahp-interop/adapters/go/sdk"
)

// Bounds of every read.
const (
	MaxBody     = 8 << 20
	StallLimit  = 10 * time.Second
	idleTimeout = 120 * time.Second
)

// Discovery is the one hooks/capabilities request a catalogue client sends.
func Discovery() map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": "discovery", "method": "hooks/capabilities",
		"params": map[string]any{"protocolVersion": "draft"}}
}

// AHPHandler is the AHP endpoint: POST of any JSON-RPC message on any path,
// GET /capabilities (the bare capabilities object, never a receipt);
// authentication from the headers before any body byte.
type AHPHandler struct {
	Backend  *Backend
	Policy   *sdk.ServerPolicy
	Shutdown <-chan struct{}
}

func (h *AHPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.Policy != nil {
		if why := h.Policy.Authorize(r.Header.Values("Authorization")); why != "" {
			fmt.Fprintf(os.Stderr, "ahp-go server: refused %s %s: %s\n", r.Method, r.URL.Path, why)
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	switch r.Method {
	case http.MethodGet:
		if r.URL.Path != "/capabilities" {
			http.NotFound(w, r)
			return
		}
		// The bare capabilities object upstream clients read (validated against
		// capabilities.schema.json), not a JSON-RPC envelope; never dispatched,
		// so never recorded: it is no hooks/capabilities request a client sent.
		writeJSON(w, http.StatusOK, sdk.GetCapabilities(h.Backend.Manifest()))
	case http.MethodPost:
		body, status := readBody(w, r)
		if status != 0 {
			w.Header().Set("Connection", "close")
			w.WriteHeader(status)
			return
		}
		msg, err := sdk.Decode(body)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, RPCError(nil, ParseError, "parse error", nil))
			return
		}
		h.send(w, r, h.Backend.Dispatch(msg))
	default:
		w.Header().Set("Allow", "GET, POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (h *AHPHandler) send(w http.ResponseWriter, r *http.Request, a Answer) {
	if !a.HasReply {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if a.Gate != nil {
		select {
		case <-a.Gate:
		case <-r.Context().Done():
			return
		case <-h.Shutdown:
		}
	}
	writeJSON(w, http.StatusOK, a.Reply)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data := sdk.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(status)
	w.Write(data)
}

// readBody reads at most MaxBody bytes, each read bounded by StallLimit; a
// non-zero status says how to refuse (413 too large, 400 malformed framing).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, int) {
	if r.ContentLength > MaxBody {
		return nil, http.StatusRequestEntityTooLarge
	}
	rc := http.NewResponseController(w)
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 64<<10)
	for {
		_ = rc.SetReadDeadline(time.Now().Add(StallLimit))
		n, err := r.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > MaxBody {
			return nil, http.StatusRequestEntityTooLarge
		}
		if errors.Is(err, io.EOF) {
			_ = rc.SetReadDeadline(time.Time{})
			return buf, 0
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, http.StatusRequestTimeout
			}
			return nil, http.StatusBadRequest
		}
	}
}

// NewHTTPServer makes an http.Server with the contract's bounds.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: StallLimit,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
	}
}

// Listen binds 127.0.0.1 on an ephemeral port.
func Listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// Port of a listener.
func Port(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }
