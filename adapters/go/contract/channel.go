package contract

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"ahp-interop/adapters/go/sdk"
)

// Call is one request in flight. The first outcome wins: a reply, a failure,
// or abandonment at the deadline (which undoes what the channel registered:
// the exchange severed, the pending id forgotten, so a late reply is stray).
type Call struct {
	once  sync.Once
	done  chan struct{}
	value any
	err   error
	mu    sync.Mutex
	undo  func()
	gone  bool
}

// NewCall makes a call with no outcome yet.
func NewCall() *Call { return &Call{done: make(chan struct{})} }

func (c *Call) settle(v any, err error) {
	c.once.Do(func() {
		c.value, c.err = v, err
		close(c.done)
	})
}

// Resolve settles the call with a parsed reply.
func (c *Call) Resolve(v any) { c.settle(v, nil) }

// Fail settles the call with an error.
func (c *Call) Fail(err error) { c.settle(nil, err) }

func (c *Call) onAbandon(undo func()) {
	c.mu.Lock()
	gone := c.gone
	if !gone {
		c.undo = undo
	}
	c.mu.Unlock()
	if gone {
		undo()
	}
}

// Abandon stops waiting: the call fails unless it already ended.
func (c *Call) Abandon(reason string) {
	c.settle(nil, &TransportError{reason})
	c.mu.Lock()
	c.gone = true
	undo := c.undo
	c.undo = nil
	c.mu.Unlock()
	if undo != nil {
		undo()
	}
}

// Result waits up to timeout for the reply (then abandons the call). The
// error is a *TransportError or a *MalformedResponse.
func (c *Call) Result(timeout time.Duration) (any, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-c.done:
	case <-timer.C:
		c.Abandon(fmt.Sprintf("no reply within %s", timeout))
	}
	return c.value, c.err
}

// Channel carries requests with several in flight.
type Channel interface {
	// Call sends through the pending-request bookkeeping; timeout is how long
	// the exchange may take.
	Call(msg any, timeout time.Duration) *Call
	// Replay sends the same bytes again outside that bookkeeping.
	Replay(msg any, timeout time.Duration) *Call
	// Notify sends a notification and never waits for its answer.
	Notify(msg any) error
	Close()
}

// BrokenChannel fails everything alike.
type BrokenChannel struct{ Reason string }

// Call fails at once.
func (b BrokenChannel) Call(any, time.Duration) *Call {
	c := NewCall()
	c.Fail(&TransportError{b.Reason})
	return c
}

// Replay fails at once.
func (b BrokenChannel) Replay(msg any, t time.Duration) *Call { return b.Call(msg, t) }

// Notify fails.
func (b BrokenChannel) Notify(any) error { return &TransportError{b.Reason} }

// Close does nothing.
func (b BrokenChannel) Close() {}

// HTTPChannel POSTs to one endpoint; every exchange in flight has its own
// connection (idle keep-alive ones are reused), so a held reply blocks
// nothing else. Notifications go to the base URL's /observe.
type HTTPChannel struct {
	url, observeURL, token string
	client                 *http.Client
	transport              *http.Transport
	ctx                    context.Context
	cancel                 context.CancelFunc
}

// NewHTTPChannel makes a channel to endpoint (its intercept URL).
func NewHTTPChannel(endpoint, token string, cfg *tls.Config) *HTTPChannel {
	target := InterceptURL(endpoint)
	observe := target
	if u, err := url.Parse(target); err == nil {
		u.Path = strings.TrimSuffix(u.Path, "/intercept") + "/observe"
		observe = u.String()
	}
	t := newTransport(cfg)
	t.MaxConnsPerHost = 0
	t.MaxIdleConnsPerHost = 4
	t.IdleConnTimeout = 2 * time.Second // a server may drop an idle connection
	ctx, cancel := context.WithCancel(context.Background())
	return &HTTPChannel{url: target, observeURL: observe, token: token, transport: t,
		client: &http.Client{Transport: t, CheckRedirect: noRedirects}, ctx: ctx, cancel: cancel}
}

func (h *HTTPChannel) post(ctx context.Context, target string, msg any) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(sdk.Encode(msg)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	return h.client.Do(req)
}

// Call runs one exchange in its own goroutine.
func (h *HTTPChannel) Call(msg any, timeout time.Duration) *Call {
	call := NewCall()
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	call.onAbandon(cancel)
	go func() {
		defer cancel()
		resp, err := h.post(ctx, h.url, msg)
		if err != nil {
			call.Fail(&TransportError{fmt.Sprintf("HTTP exchange failed: %v", err)})
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
		if err != nil {
			call.Fail(&TransportError{fmt.Sprintf("reading the response failed: %v", err)})
			return
		}
		if resp.StatusCode != http.StatusOK {
			call.Fail(&TransportError{fmt.Sprintf("HTTP status %d", resp.StatusCode)})
			return
		}
		v, err := sdk.Decode(data)
		if err != nil {
			call.Fail(&MalformedResponse{"response body is not strict JSON: " + err.Error()})
			return
		}
		call.Resolve(v)
	}()
	return call
}

// Exchange is one POST of msg with the run's credentials: the status and
// the body, whatever the status (an error: no answer).
func (h *HTTPChannel) Exchange(msg any, timeout time.Duration) (int, []byte, error) {
	return h.exchange(h.url, msg, timeout)
}

func (h *HTTPChannel) exchange(target string, msg any, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	defer cancel()
	resp, err := h.post(ctx, target, msg)
	if err != nil {
		return 0, nil, &TransportError{fmt.Sprintf("HTTP exchange failed: %v", err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return 0, nil, &TransportError{fmt.Sprintf("reading the response failed: %v", err)}
	}
	return resp.StatusCode, data, nil
}

// ExchangeAt is Exchange to a route of the endpoint's base (the endpoint
// without /intercept), "capabilities" or "observe"; "" is the endpoint.
func (h *HTTPChannel) ExchangeAt(route string, msg any, timeout time.Duration) (int, []byte, error) {
	target := h.url
	if u, err := url.Parse(h.url); err == nil && route != "" {
		u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/intercept"), "/") + "/" + route
		target = u.String()
	}
	return h.exchange(target, msg, timeout)
}

// Replay is Call: over HTTP every POST has its own answer.
func (h *HTTPChannel) Replay(msg any, timeout time.Duration) *Call { return h.Call(msg, timeout) }

// Notify POSTs msg; whatever comes back, whenever, is read and dropped.
func (h *HTTPChannel) Notify(msg any) error {
	go func() {
		resp, err := h.post(h.ctx, h.observeURL, msg)
		if err != nil {
			if h.ctx.Err() == nil {
				logLine("client", "notification: no answer (%v; ignored)", err)
			}
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponse))
		resp.Body.Close()
		switch resp.StatusCode {
		case 200, 202, 204:
		default:
			logLine("client", "notification answered with HTTP %d (ignored)", resp.StatusCode)
		}
	}()
	return nil
}

// Close severs every exchange still waiting and the idle connections.
func (h *HTTPChannel) Close() {
	h.cancel()
	h.transport.CloseIdleConnections()
}

func logLine(role, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ahp-go %s: %s\n", role, fmt.Sprintf(format, args...))
}

// StdioChannel is a spawned server speaking NDJSON; replies are routed by id:
// to the pending call with that id, else to a replay of it, else to
// Unsolicited. A line that is not strict JSON fails the one pending call
// when there is exactly one, else it is dropped.
type StdioChannel struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	pgid   int
	waited chan struct{}
	reader chan struct{}

	// Unsolicited receives every frame no call waits for (set before use).
	Unsolicited func(frame any)

	wmu     sync.Mutex
	mu      sync.Mutex
	pending map[string]*Call
	replays map[string][]*Call
	closed  string
}

// StartStdioChannel spawns argv in dir in its own process group.
func StartStdioChannel(argv []string, dir string) (*StdioChannel, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &StdioChannel{cmd: cmd, stdin: stdin, pgid: cmd.Process.Pid, waited: make(chan struct{}),
		reader: make(chan struct{}), pending: map[string]*Call{}, replays: map[string][]*Call{},
		Unsolicited: func(frame any) {
			logLine("client", "dropped a frame no request waits for: %.200s", sdk.EncodeString(frame))
		}}
	register(s.pgid, true)
	go func() {
		defer close(s.reader)
		r := bufio.NewReaderSize(stdout, 64<<10)
		for {
			data, err := readLine(r)
			if len(bytes.TrimSpace(data)) > 0 {
				s.route(data)
			}
			if err != nil {
				s.shut("the stdio server closed its stdout")
				return
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(s.waited)
	}()
	return s, nil
}

// Pid of the spawned server.
func (s *StdioChannel) Pid() int { return s.pgid }

// IDKey is a JSON-RPC id as a map key ("" for one that is neither a string nor a number).
func IDKey(id any) string {
	if _, ok := id.(string); ok || sdk.IsNumber(id) {
		return sdk.EncodeString(id)
	}
	return ""
}

func (s *StdioChannel) route(data []byte) {
	var frame any
	var err error
	if len(data) > MaxResponse {
		err = fmt.Errorf("line too long")
	} else {
		frame, err = sdk.Decode(data)
	}
	if err != nil {
		s.mu.Lock()
		var only *Call
		if len(s.pending) == 1 {
			for k, c := range s.pending {
				only = c
				delete(s.pending, k)
			}
		}
		s.mu.Unlock()
		if only != nil {
			logLine("client", "a line that is not strict JSON, taken as the one pending call's: %v", err)
			only.Fail(&MalformedResponse{"response line is not strict JSON: " + err.Error()})
		} else {
			logLine("client", "dropped a line that is not strict JSON: %v", err)
		}
		return
	}
	key := IDKey(sdk.Path(frame, "id"))
	var call *Call
	s.mu.Lock()
	if key != "" {
		if c, ok := s.pending[key]; ok {
			call = c
			delete(s.pending, key)
		} else if q := s.replays[key]; len(q) > 0 {
			call = q[0]
			s.replays[key] = q[1:]
		}
	}
	s.mu.Unlock()
	if call != nil {
		call.Resolve(frame)
	} else {
		s.Unsolicited(frame)
	}
}

func (s *StdioChannel) shut(reason string) {
	s.mu.Lock()
	s.closed = reason
	var waiting []*Call
	for _, c := range s.pending {
		waiting = append(waiting, c)
	}
	for _, q := range s.replays {
		waiting = append(waiting, q...)
	}
	s.pending = map[string]*Call{}
	s.replays = map[string][]*Call{}
	s.mu.Unlock()
	for _, c := range waiting {
		c.Fail(&TransportError{reason})
	}
}

func (s *StdioChannel) write(msg any) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.stdin.Write(append(sdk.Encode(msg), '\n')); err != nil {
		return &TransportError{"the server process is not reading its stdin"}
	}
	return nil
}

func (s *StdioChannel) forget(key string, call *Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[key] == call {
		delete(s.pending, key)
	}
	q := s.replays[key]
	for i, c := range q {
		if c == call {
			s.replays[key] = append(append([]*Call{}, q[:i]...), q[i+1:]...)
			break
		}
	}
}

func (s *StdioChannel) register(msg any, replay bool) *Call {
	call := NewCall()
	key := IDKey(sdk.Path(msg, "id"))
	s.mu.Lock()
	switch {
	case s.closed != "":
		call.Fail(&TransportError{s.closed})
	case key == "":
		call.Fail(&TransportError{"a request needs a string or number id"})
	case replay:
		s.replays[key] = append(s.replays[key], call)
	case s.pending[key] != nil:
		call.Fail(&TransportError{"a request with id " + key + " is already pending"})
	default:
		s.pending[key] = call
	}
	s.mu.Unlock()
	select {
	case <-call.done:
		return call
	default:
	}
	call.onAbandon(func() { s.forget(key, call) })
	if err := s.write(msg); err != nil {
		s.forget(key, call)
		call.Fail(err)
	}
	return call
}

// Call registers the id as pending and writes the line.
func (s *StdioChannel) Call(msg any, _ time.Duration) *Call { return s.register(msg, false) }

// Replay writes the line again, its reply queued apart.
func (s *StdioChannel) Replay(msg any, _ time.Duration) *Call { return s.register(msg, true) }

// Notify writes the line.
func (s *StdioChannel) Notify(msg any) error { return s.write(msg) }

// Close closes stdin, waits briefly, then kills the whole process group.
func (s *StdioChannel) Close() {
	_ = s.stdin.Close()
	select {
	case <-s.waited:
	case <-time.After(2 * time.Second):
	}
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	<-s.waited
	register(s.pgid, false)
	select {
	case <-s.reader:
	case <-time.After(2 * time.Second):
	}
}

// Exited reports whether the spawned server has exited.
func (s *StdioChannel) Exited() bool {
	select {
	case <-s.waited:
		return true
	default:
		return false
	}
}
