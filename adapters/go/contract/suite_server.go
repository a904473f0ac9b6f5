package contract

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"ahp-interop/adapters/go/sdk"
)

// SuiteAnswer is what a lifecycle-style server sends back for one message.
type SuiteAnswer struct {
	Reply    any
	HasReply bool
	Raw      []byte          // sent as it is instead of Reply (not JSON on purpose)
	Status   int             // HTTP status (0: 200 with a reply, 204 without)
	Gate     <-chan struct{} // nil: at once
	Before   func()          // runs just before the reply is written
	Never    bool            // never answered (HTTP: closed once the client leaves or at shutdown)
}

// SuiteDispatcher answers one parsed AHP message.
type SuiteDispatcher interface {
	Dispatch(msg any) SuiteAnswer
	// Manifest is the discovery manifest whose tool.before capabilities GET
	// /capabilities answers (the one hooks/capabilities is answered with);
	// that answer is never dispatched, so never recorded.
	Manifest() map[string]any
}

// SuiteServer is a lifecycle-style server process: the entry log, the held
// replies by id, the content store, and the AHP side.
type SuiteServer struct {
	Settings *SuiteServerSettings
	Entries  *EntryLog
	Barriers *Barriers
	Store    *ContentStore
	Backend  SuiteDispatcher
	Closing  chan struct{} // closed at shutdown: unanswered exchanges end
	// ObservedKinds and ControlCalls configure the control listener
	// (SuiteControl.Observed and .Calls).
	ObservedKinds []string
	ControlCalls  map[string]bool
	once          sync.Once
}

// NewSuiteServer makes the shared parts; the caller sets Backend.
func NewSuiteServer(s *SuiteServerSettings) *SuiteServer {
	return &SuiteServer{Settings: s, Entries: NewEntryLog(), Barriers: NewBarriers(),
		Store: NewContentStore(), Closing: make(chan struct{})}
}

// NewControl is the control listener's handler of s.
func (s *SuiteServer) NewControl() *SuiteControl {
	c := NewSuiteControl(s.Entries, s.Barriers)
	c.Observed, c.Calls = s.ObservedKinds, s.ControlCalls
	return c
}

func (s *SuiteServer) shutdown() {
	s.once.Do(func() {
		s.Barriers.ReleaseAll()
		close(s.Closing)
	})
}

// Run serves until POST /shutdown, EOF on stdin (stdio) or SIGTERM/SIGINT.
func (s *SuiteServer) Run() (int, error) {
	settings := s.Settings
	control := s.NewControl()
	controlListener, err := Listen()
	if err != nil {
		return 1, err
	}
	controlServer := NewHTTPServer(control)
	go controlServer.Serve(controlListener)

	uploadListener, err := Listen()
	if err != nil {
		return 1, err
	}
	uploadServer := NewHTTPServer(&UploadHandler{Token: settings.UploadToken, Store: s.Store, Entries: s.Entries})
	go uploadServer.Serve(uploadListener)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		control.Stop()
	}()

	var ahp *http.Server
	var endpoint any
	stdioDone := make(chan struct{})
	if settings.Transport == "http" {
		var policy *sdk.ServerPolicy
		var tlsConfig *tls.Config
		if settings.Auth != nil {
			policy = &settings.Auth.Policy
			if settings.Auth.TLS != nil {
				if tlsConfig, err = ServerTLS(settings.Auth.TLS); err != nil {
					return 2, &ConfigError{File: settings.File, Field: settings.Auth.TLS.Field, Msg: err.Error()}
				}
			}
		}
		listener, err := Listen()
		if err != nil {
			return 1, err
		}
		ahp = NewHTTPServer(&suiteHandler{server: s, policy: policy})
		scheme := "http"
		if tlsConfig != nil {
			scheme = "https"
			ahp.TLSConfig = tlsConfig
			listener = quietTLSListener{tls.NewListener(listener, tlsConfig)}
		}
		go ahp.Serve(listener)
		endpoint = fmt.Sprintf("%s://127.0.0.1:%d/intercept", scheme, Port(listener))
	} else {
		out := newLineWriter(os.Stdout)
		control.Emit = out.write
		go func() {
			s.ServeStdio(os.Stdin, out)
			close(stdioDone)
		}()
	}
	err = WriteJSONAtomic(settings.ReadinessFile, map[string]any{
		"endpoint":        endpoint,
		"controlEndpoint": fmt.Sprintf("http://127.0.0.1:%d", Port(controlListener)),
		"uploadEndpoint":  fmt.Sprintf("http://127.0.0.1:%d%s", Port(uploadListener), UploadPath),
		"pid":             os.Getpid(),
	})
	if err != nil {
		return 1, err
	}
	select {
	case <-control.Done():
	case <-stdioDone:
	}
	s.shutdown()
	control.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if ahp != nil {
		_ = ahp.Shutdown(ctx)
	}
	_ = uploadServer.Shutdown(ctx)
	_ = controlServer.Shutdown(ctx)
	return 0, nil
}

// suiteHandler is the AHP listener of a lifecycle-style server.
type suiteHandler struct {
	server *SuiteServer
	policy *sdk.ServerPolicy
}

func (h *suiteHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.policy != nil {
		if why := h.policy.Authorize(r.Header.Values("Authorization")); why != "" {
			logLine("server", "refused %s %s: %s", r.Method, r.URL.Path, why)
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	var a SuiteAnswer
	switch r.Method {
	case http.MethodGet:
		if r.URL.Path != "/capabilities" {
			http.NotFound(w, r)
			return
		}
		// the bare capabilities object upstream clients read, not an envelope
		a = SuiteAnswer{Reply: sdk.GetCapabilities(h.server.Backend.Manifest()), HasReply: true}
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
		a = h.server.Backend.Dispatch(msg)
	default:
		w.Header().Set("Allow", "GET, POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if a.Never {
		select {
		case <-r.Context().Done():
		case <-h.server.Closing:
		}
		panic(http.ErrAbortHandler) // closes the connection without an answer
	}
	if a.Gate != nil {
		select {
		case <-a.Gate:
		case <-r.Context().Done():
			return
		case <-h.server.Closing:
		}
	}
	if a.Before != nil {
		a.Before()
	}
	status := a.Status
	switch {
	case a.Raw != nil:
		if status == 0 {
			status = http.StatusOK
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(a.Raw)))
		w.WriteHeader(status)
		w.Write(a.Raw)
	case a.HasReply:
		if status == 0 {
			status = http.StatusOK
		}
		writeJSON(w, status, a.Reply)
	default:
		if status == 0 {
			status = http.StatusNoContent
		}
		w.WriteHeader(status)
	}
}

// lineWriter writes whole lines under one lock.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newLineWriter(out io.Writer) *lineWriter { return &lineWriter{w: bufio.NewWriter(out)} }

func (l *lineWriter) raw(data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(data)
	l.w.WriteByte('\n')
	l.w.Flush()
}

func (l *lineWriter) write(v any) { l.raw(sdk.Encode(v)) }

// ServeStdio answers one JSON-RPC object per line until EOF or shutdown; a
// held reply goes out from its own goroutine while later lines are answered.
func (s *SuiteServer) ServeStdio(in io.Reader, out *lineWriter) {
	var held sync.WaitGroup
	send := func(a SuiteAnswer) {
		if a.Before != nil {
			a.Before()
		}
		switch {
		case a.Raw != nil:
			out.raw(a.Raw)
		case a.HasReply:
			out.write(a.Reply)
		}
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(line) > 0 {
			if len(line) > MaxLine {
				out.write(RPCError(nil, ParseError, "line too long", nil))
			} else if msg, perr := sdk.Decode(line); perr != nil {
				out.write(RPCError(nil, ParseError, "parse error", nil))
			} else if a := s.Backend.Dispatch(msg); a.Never {
				// never answered
			} else if a.Gate == nil {
				send(a)
			} else {
				held.Add(1)
				go func(a SuiteAnswer) {
					defer held.Done()
					select {
					case <-a.Gate:
					case <-s.Closing:
					}
					send(a)
				}(a)
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				logLine("server", "stdin: %v", err)
			}
			break
		}
	}
	s.shutdown()
	held.Wait()
}

// NewSuiteHandler is the AHP listener's handler of s (policy nil: no auth).
func NewSuiteHandler(s *SuiteServer, policy *sdk.ServerPolicy) http.Handler {
	return &suiteHandler{server: s, policy: policy}
}

// Shutdown releases every held reply and ends every unanswered exchange.
func (s *SuiteServer) Shutdown() { s.shutdown() }
