package contract

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"ahp-interop/adapters/go/sdk"
)

// SuiteControl is the lifecycle control listener (docs/LIFECYCLE.md,
// "Control"): /health, /receipts, /wait, /release {id}, /mark,
// /wait-observed, /emit (stdio) and /shutdown, each answered {"ok": true};
// a wait gives up after WaitLimit with 408.
type SuiteControl struct {
	Entries  *EntryLog
	Barriers *Barriers
	Emit     func(frame any) // nil over HTTP: /emit is refused
	// Observed are the entry kinds /wait-observed counts (nil: observed).
	Observed []string
	// Calls are the POST calls served besides /shutdown (nil: every one).
	Calls map[string]bool
	once  sync.Once
	done  chan struct{}
}

// NewSuiteControl makes the handler; Done closes at POST /shutdown.
func NewSuiteControl(entries *EntryLog, barriers *Barriers) *SuiteControl {
	return &SuiteControl{Entries: entries, Barriers: barriers, done: make(chan struct{})}
}

// Done is closed once shutdown was asked for.
func (c *SuiteControl) Done() <-chan struct{} { return c.done }

// Stop closes Done (idempotent).
func (c *SuiteControl) Stop() { c.once.Do(func() { close(c.done) }) }

var ok = map[string]any{"ok": true}

func fail(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]any{"error": fmt.Sprintf(format, args...)})
}

func count(m map[string]any) (int, bool) {
	v, has := m["count"]
	if !has {
		return 1, true
	}
	n, isInt := sdk.Integer(v)
	return int(n), isInt && n >= 1
}

func (c *SuiteControl) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method + " " + r.URL.Path {
	case "GET /health":
		writeJSON(w, http.StatusOK, map[string]any{"ready": true})
		return
	case "GET /receipts":
		writeJSON(w, http.StatusOK, c.Entries.Snapshot())
		return
	}
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if c.Calls != nil && r.URL.Path != "/shutdown" && !c.Calls[r.URL.Path] {
		http.NotFound(w, r)
		return
	}
	data, status := readBody(w, r)
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	m := map[string]any{}
	if len(data) > 0 {
		v, err := sdk.Decode(data)
		if err != nil {
			fail(w, http.StatusBadRequest, "body is not strict JSON: %v", err)
			return
		}
		if obj, isObject := v.(map[string]any); isObject {
			m = obj
		}
	}
	switch r.URL.Path {
	case "/wait":
		id, isString := m["id"].(string)
		n, good := count(m)
		if !isString || !good {
			fail(w, http.StatusBadRequest, "/wait needs a string id and a positive integer count")
			return
		}
		if !c.Entries.Wait(EntryReceived, id, n, WaitLimit, c.done) {
			fail(w, http.StatusRequestTimeout, "%d receipt(s) of %s did not arrive in time", n, id)
			return
		}
	case "/wait-observed":
		id, isString := m["eventId"].(string)
		n, good := count(m)
		if !isString || !good {
			fail(w, http.StatusBadRequest, "/wait-observed needs a string eventId and a positive integer count")
			return
		}
		kinds := c.Observed
		if kinds == nil {
			kinds = []string{EntryObserved}
		}
		if !c.Entries.WaitAny(kinds, id, n, WaitLimit, c.done) {
			fail(w, http.StatusRequestTimeout, "%d observation(s) of %s did not arrive in time", n, id)
			return
		}
	case "/release":
		id, isString := m["id"].(string)
		if !isString {
			fail(w, http.StatusBadRequest, "/release needs a string id")
			return
		}
		c.Barriers.Release(id)
	case "/mark":
		scenario, s1 := m["scenario"].(string)
		id, s2 := m["id"].(string)
		kind, _ := m["kind"].(string)
		if !s1 || !s2 {
			fail(w, http.StatusBadRequest, "/mark needs a string scenario and a string id")
			return
		}
		if !Marks[kind] {
			fail(w, http.StatusBadRequest, "/mark kind %s is not a mark", sdk.EncodeString(m["kind"]))
			return
		}
		c.Entries.Record(map[string]any{"kind": kind, "id": id, "scenario": scenario}, "id")
	case "/emit":
		if c.Emit == nil {
			fail(w, http.StatusConflict, "/emit is for a stdio server only")
			return
		}
		frame, has := m["response"]
		if !has {
			fail(w, http.StatusBadRequest, "/emit needs a response")
			return
		}
		c.Entries.Record(map[string]any{"kind": EntryEmitted, "id": sdk.Path(frame, "id")}, "id")
		c.Emit(frame)
	case "/shutdown":
		c.Barriers.ReleaseAll()
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusOK, ok)
		if f, isFlusher := w.(http.Flusher); isFlusher {
			f.Flush()
		}
		c.Stop()
		return
	default:
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, ok)
}

// ControlClient makes JSON calls to a server's control listener.
type ControlClient struct {
	base   string
	client *http.Client
}

// NewControlClient talks to endpoint (plain HTTP on loopback).
func NewControlClient(endpoint string) *ControlClient {
	t := newTransport(nil)
	t.IdleConnTimeout = 2 * time.Second
	return &ControlClient{base: strings.TrimSuffix(endpoint, "/"),
		client: &http.Client{Transport: t, Timeout: WaitLimit + 10*time.Second, CheckRedirect: noRedirects}}
}

// Call returns the JSON answer of a 200, else an error.
func (c *ControlClient) Call(method, path string, body any) (any, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(sdk.Encode(body))
	}
	req, err := http.NewRequest(method, c.base+path, reader)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s failed: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer failed: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s answered HTTP %d %.200s", method, path, resp.StatusCode, data)
	}
	v, err := sdk.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s %s: the answer is not strict JSON: %v", method, path, err)
	}
	return v, nil
}

// Post is Call with POST.
func (c *ControlClient) Post(path string, body any) error {
	_, err := c.Call(http.MethodPost, path, body)
	return err
}

// Close drops idle connections.
func (c *ControlClient) Close() { c.client.CloseIdleConnections() }
