package steps

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// RowFailure: the row could not run to its end (reported failed, naming Msg).
type RowFailure struct{ Msg string }

func (e *RowFailure) Error() string { return e.Msg }

// RowUnsupported: the row needs what this client does not implement
// (reported unsupported, naming Msg).
type RowUnsupported struct{ Msg string }

func (e *RowUnsupported) Error() string { return e.Msg }

// Failf is a RowFailure.
func Failf(format string, args ...any) error { return &RowFailure{fmt.Sprintf(format, args...)} }

// Unsupported is a RowUnsupported saying why.
func Unsupported(why string) error { return &RowUnsupported{why} }

// ops are the step ops a step row may hold.
var ops = map[string]bool{"send": true, "wait": true, "release": true, "receive": true, "accept": true,
	"cancel": true, "failOpen": true, "observe": true, "upload": true, "emit": true}

// Malformed stands for a reply or answer that was not strict JSON (rejected
// when evaluated).
var Malformed = &struct{ name string }{"malformed"}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// strays is the stdio reader's hook for frames no request waits for: an
// emit step announces the id it expects; every other stray frame is dropped.
type strays struct {
	mu       sync.Mutex
	expected map[string]chan struct{}
	current  chan any // an Exchange in flight: it takes the next frame
}

func (s *strays) expect(id any) chan struct{} {
	ch := make(chan struct{})
	s.mu.Lock()
	s.expected[sdk.EncodeString(id)] = ch
	s.mu.Unlock()
	return ch
}

func (s *strays) frame(frame any) {
	key := sdk.EncodeString(sdk.Path(frame, "id"))
	s.mu.Lock()
	if exchange := s.current; exchange != nil {
		s.current = nil
		s.mu.Unlock()
		exchange <- frame
		return
	}
	ch, ok := s.expected[key]
	delete(s.expected, key)
	s.mu.Unlock()
	if ok {
		close(ch)
	} else {
		Logf("client", "dropped an unsolicited frame (id %s)", key)
	}
}

// Client is one client run of a suite the lifecycle commands run: every
// row against one server, over one channel, with one control client; the
// upload aliases, the content uploads and the counts of what was sent are
// the run's.
type Client struct {
	settings  *contract.SuiteClientSettings
	schemas   *sdk.Schemas
	channel   contract.Channel
	control   *contract.ControlClient
	uploadURL string
	problem   string // why nothing can run (every row fails with it)
	stdio     bool
	strays    *strays
	target    contract.HTTPTarget // the run's HTTP credentials (backends reuse them)
	backends  map[string]contract.Channel

	aliases        map[string]string // upload alias -> receiver ref
	sources        map[string]contract.ContentSource
	contentUploads []any
	sends          map[string]int // intercepts sent per request id
	observed       map[string]int // observations sent per event id
}

// Settings are the run's config.
func (c *Client) Settings() *contract.SuiteClientSettings { return c.settings }

// Schemas are the run's canonical schemas.
func (c *Client) Schemas() *sdk.Schemas { return c.schemas }

// Channel is the channel to the run's server.
func (c *Client) Channel() contract.Channel { return c.channel }

// Stdio: the run's server is the stdio child this client spawned.
func (c *Client) Stdio() bool { return c.stdio }

// Problem says why nothing can run ("": rows can run); every row fails with it.
func (c *Client) Problem() string { return c.problem }

// ContentUploads are the content sources uploaded so far, in order (a copy).
func (c *Client) ContentUploads() []any { return append([]any{}, c.contentUploads...) }

// Timeout is the config's timeoutMs.
func (c *Client) Timeout() time.Duration { return c.settings.Timeout() }

// ResetAliases forgets every upload alias.
func (c *Client) ResetAliases() { c.aliases = map[string]string{} }

// Alias binds an upload alias to the receiver's ref (a later upload under
// the alias rebinds it).
func (c *Client) Alias(alias, ref string) { c.aliases[alias] = ref }

// RebindRefs is items with their body refs rebound from upload aliases to
// the receiver's refs.
func (c *Client) RebindRefs(items any) any { return sdk.RebindRefs(items, c.aliases) }

// Post is a control call; its failure fails the row.
func (c *Client) Post(path string, body map[string]any) error {
	if c.control == nil {
		return Failf("no control listener")
	}
	if err := c.control.Post(path, body); err != nil {
		return Failf("%v", err)
	}
	return nil
}

// Mark is POST /mark.
func (c *Client) Mark(scenario, kind, id string) error {
	return c.Post("/mark", map[string]any{"scenario": scenario, "kind": kind, "id": id})
}

// WaitObserved is POST /wait-observed for one more message this run sent
// with eventID, so its receipt precedes later marks and calls.
func (c *Client) WaitObserved(eventID string) error {
	c.observed[eventID]++
	return c.Post("/wait-observed", map[string]any{"eventId": eventID, "count": c.observed[eventID]})
}

// Upload sends data declaring size and sha over route: the status, and the
// receiver's receipt on a 201 (checked against the bytes sent).
func (c *Client) Upload(route contract.UploadRoute, data []byte, size int64, sha string) (int, map[string]any, error) {
	endpoint := route.Endpoint
	if endpoint == "" {
		endpoint = c.uploadURL
	}
	if endpoint == "" {
		return 0, nil, Failf("no upload endpoint (config upload.endpoint or readiness)")
	}
	token := ""
	if route.TokenEnv != "" {
		if token = os.Getenv(route.TokenEnv); token == "" {
			Logf("client", "$%s is not set: uploading without a credential", route.TokenEnv)
		}
	}
	var cfg = (*contract.TLSFiles)(nil)
	if route.CAFile != "" && strings.HasPrefix(endpoint, "https:") {
		cfg = &contract.TLSFiles{CAFile: route.CAFile}
	}
	tlsConfig, err := uploadTLS(cfg)
	if err != nil {
		return 0, nil, Failf("upload: tls.caFile: %v", err)
	}
	answer, err := contract.SendUpload(endpoint, data, size, sha, token, route.Timeout, tlsConfig)
	if err != nil {
		return 0, nil, Failf("upload: %v", err)
	}
	if answer.Status != 201 {
		return answer.Status, nil, nil
	}
	receipt := answer.Receipt()
	if receipt == nil || c.schemas.Check(UploadReceipt, receipt) != "" {
		return 0, nil, Failf("upload: a 201 without a valid {ref, size, sha256} receipt")
	}
	if n, _ := sdk.Integer(receipt["size"]); n != int64(len(data)) || receipt["sha256"] != contract.SHA256Hex(data) {
		return 0, nil, Failf("upload: the receipt's size or sha256 is not the bytes sent")
	}
	return answer.Status, receipt, nil
}

// Prepare is msg with its event's body refs rebound from upload aliases to
// the receiver's refs; a content source no step uploaded is uploaded first.
func (c *Client) Prepare(msg map[string]any) (map[string]any, error) {
	out := sdk.Clone(msg).(map[string]any)
	event, ok := sdk.Path(out, "params", "event").(map[string]any)
	if !ok {
		return out, nil
	}
	items, has := event["items"]
	if !has {
		return out, nil
	}
	for _, ref := range sdk.BodyRefs(items) {
		source, isSource := c.sources[ref]
		if _, aliased := c.aliases[ref]; aliased || !isSource {
			continue
		}
		status, receipt, err := c.Upload(c.settings.Upload, source.Data, source.Size, source.SHA256)
		if err != nil {
			return nil, err
		}
		if receipt == nil {
			return nil, Failf("content source %s: upload answered %d", sdk.EncodeString(ref), status)
		}
		c.aliases[ref] = receipt["ref"].(string)
		c.contentUploads = append(c.contentUploads, map[string]any{
			"sourceRef": ref, "descriptor": receipt, "method": msg["method"], "eventId": event["id"]})
	}
	event["items"] = sdk.RebindRefs(items, c.aliases)
	return out, nil
}

// Checked is msg when schema finds it valid; else the row fails.
func (c *Client) Checked(msg map[string]any, schema string) (map[string]any, error) {
	if problem := c.schemas.Check(schema, msg); problem != "" {
		return nil, Failf("the message to send is invalid: %s", problem)
	}
	return msg, nil
}

// channelFor is the channel of a chain subscription's backend: the run's
// server for every name but unreachable (nil), which the config defines.
func (c *Client) channelFor(backend any) contract.Channel {
	if backend != contract.Unreachable {
		return nil
	}
	if ch, ok := c.backends[contract.Unreachable]; ok {
		return ch
	}
	settings, ok := c.settings.Backends[contract.Unreachable]
	var ch contract.Channel
	switch {
	case !ok:
		ch = contract.BrokenChannel{Reason: "the config names no backend unreachable (backends.unreachable)"}
	case c.stdio:
		if len(settings.Command) == 0 {
			ch = contract.BrokenChannel{Reason: "the backend has no command (a stdio run needs one)"}
		} else if sc, err := contract.StartStdioChannel(settings.Command, c.settings.ServerCwd); err != nil {
			ch = contract.BrokenChannel{Reason: fmt.Sprintf("backend: %v", err)}
		} else {
			ch = sc
		}
	case settings.Endpoint == "":
		ch = contract.BrokenChannel{Reason: "the backend has no endpoint (an HTTP run needs one)"}
	default:
		t, err := contract.ClientHTTPTarget(c.settings.ClientSettings, settings.Endpoint)
		if err != nil || t.Broken != "" {
			ch = contract.BrokenChannel{Reason: fmt.Sprintf("backend: %v%s", err, t.Broken)}
		} else {
			ch = contract.NewHTTPChannel(settings.Endpoint, c.target.Token, t.TLS)
		}
	}
	c.backends[contract.Unreachable] = ch
	return ch
}

func (c *Client) send(msg map[string]any, bypass bool, timeout time.Duration, ch contract.Channel) *contract.Call {
	if ch != nil {
		return ch.Call(msg, timeout)
	}
	c.sends[fmt.Sprint(msg["id"])]++
	if bypass {
		return c.channel.Replay(msg, timeout)
	}
	return c.channel.Call(msg, timeout)
}

// notify sends hooks/observe and never waits for its answer; then POST
// /wait-observed (both transports), so the receipt precedes later marks and
// calls. Through another backend a failed send is only noted.
func (c *Client) notify(msg map[string]any, ch contract.Channel) error {
	if ch != nil {
		if err := ch.Notify(msg); err != nil {
			Logf("client", "observation to another backend not delivered: %v", err)
		}
		return nil
	}
	if err := c.channel.Notify(msg); err != nil {
		return Failf("observation: %v", err)
	}
	eventID, _ := sdk.Path(msg, "params", "event", "id").(string)
	return c.WaitObserved(eventID)
}

// evaluate applies reply under the core rules, without the core host's task rule.
func (c *Client) evaluate(request map[string]any, reply any) sdk.Outcome {
	if reply == any(Malformed) {
		return sdk.Outcome{Actual: map[string]any{"rejected": true}, Reason: "the reply is not strict JSON"}
	}
	return sdk.Apply(c.schemas, request, reply, sdk.Options{NoHostRule: true})
}

// Result waits for call's reply: a malformed reply is Malformed, a transport
// failure an error.
func Result(call *contract.Call, timeout time.Duration, what string) (any, error) {
	v, err := call.Result(timeout)
	var bad *contract.MalformedResponse
	if errors.As(err, &bad) {
		Logf("client", "%s: %v", what, err)
		return Malformed, nil
	}
	return v, err
}

func unsupportedRow(id, why string) any {
	return map[string]any{"id": id, "status": "unsupported", "error": why}
}

// Row is one row's result as the report carries it: unsupported when the
// row runs only over another transport, failed when nothing can run (the
// run's problem), else what rows make of it (a RowUnsupported unsupported,
// any other error failed, else completed with its actual).
func (c *Client) Row(rows Rows, row contract.Scenario) any {
	if ts, ok := row.Raw["transports"].([]any); ok {
		applicable := false
		for _, t := range ts {
			applicable = applicable || t == c.settings.Transport
		}
		if !applicable {
			return unsupportedRow(row.ID, "the scenario runs only over "+strings.Join(sdk.Strings(ts), ", "))
		}
	}
	if c.problem != "" {
		return map[string]any{"id": row.ID, "status": "failed", "error": c.problem}
	}
	actual, err := rows.Row(c, row)
	var unsupported *RowUnsupported
	switch {
	case errors.As(err, &unsupported):
		return unsupportedRow(row.ID, err.Error())
	case err != nil:
		Logf("client", "%s: %v", row.ID, err)
		return map[string]any{"id": row.ID, "status": "failed", "error": err.Error()}
	}
	return map[string]any{"id": row.ID, "status": "completed", "actual": actual}
}

// RunSteps runs a step row (docs/LIFECYCLE.md): its chain when it has one,
// else its steps; what this client cannot run is unsupported, checked
// before anything is sent.
func (c *Client) RunSteps(row contract.Scenario) (map[string]any, error) {
	if err := unsupportedIn(row); err != nil {
		return nil, err
	}
	if _, isChain := row.Raw["chain"]; isChain {
		return c.runChain(row)
	}
	return newStepRun(c, row).run()
}

// unsupportedIn says what of the row this client cannot run (checked before
// anything is sent).
func unsupportedIn(row contract.Scenario) error {
	requests, ok := row.Raw["requests"].(map[string]any)
	steps, stepsOK := row.Raw["steps"].([]any)
	if _, has := row.Raw["steps"]; !has {
		stepsOK = true
	}
	if !ok || !stepsOK {
		return Unsupported("the scenario has no requests object or steps array")
	}
	for _, step := range steps {
		op, _ := sdk.Path(step, "op").(string)
		if !ops[op] {
			return Unsupported(fmt.Sprintf("step op %s is not implemented by ahp-go", sdk.EncodeString(sdk.Path(step, "op"))))
		}
	}
	for _, key := range sortedKeys(requests) {
		eventType, _ := sdk.Path(requests[key], "params", "event", "type").(string)
		if sdk.BoundaryFor(eventType) == nil {
			return Unsupported(fmt.Sprintf("event type %q is not implemented by ahp-go", eventType))
		}
	}
	if _, isChain := row.Raw["chain"]; isChain && !hasKey(requests, "a") {
		return Unsupported("a chain needs requests.a")
	}
	return nil
}

func uploadTLS(files *contract.TLSFiles) (*tls.Config, error) {
	if files == nil {
		return nil, nil
	}
	return contract.ClientTLS(*files)
}

// decodeBase64 decodes a step's bodyBase64.
func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

// Exchange sends msg without the SDK's checks: the HTTP status (0 over
// stdio) and the parsed answer (Malformed: not strict JSON).
func (c *Client) Exchange(msg any) (int, any, error) { return c.ExchangeAt("", msg) }

// ExchangeAt is Exchange over HTTP to route of the endpoint's base ("": the
// endpoint itself); over stdio the next frame is the answer, whatever its id.
func (c *Client) ExchangeAt(route string, msg any) (int, any, error) {
	switch ch := c.channel.(type) {
	case *contract.HTTPChannel:
		status, data, err := ch.ExchangeAt(route, msg, c.Timeout())
		if err != nil {
			return 0, nil, Failf("%v", err)
		}
		if len(data) == 0 {
			return status, nil, nil
		}
		v, err := sdk.Decode(data)
		if err != nil {
			return status, Malformed, nil
		}
		return status, v, nil
	case *contract.StdioChannel:
		answer := make(chan any, 1)
		c.strays.mu.Lock()
		c.strays.current = answer
		c.strays.mu.Unlock()
		defer func() {
			c.strays.mu.Lock()
			if c.strays.current == answer {
				c.strays.current = nil
			}
			c.strays.mu.Unlock()
		}()
		if err := ch.Notify(msg); err != nil {
			return 0, nil, Failf("%v", err)
		}
		select {
		case v := <-answer:
			return 0, v, nil
		case <-time.After(c.Timeout()):
			return 0, nil, Failf("no answer line in time")
		}
	case contract.BrokenChannel:
		return 0, nil, Failf("%s", ch.Reason)
	}
	return 0, nil, Failf("no channel to the server")
}
