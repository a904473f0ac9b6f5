package steps

import (
	"fmt"
	"time"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// Request states of a step scenario.
const (
	pending   = "pending"
	staged    = "staged"
	published = "published"
	cancelled = "cancelled"
	rejected  = "failed" // its reply was rejected at acceptance: an operational failure
)

type slot struct {
	key  string
	call *contract.Call
}

// stepRun is one step scenario (docs/LIFECYCLE.md, "Client: the steps").
type stepRun struct {
	c        *Client
	sid      string
	requests map[string]any
	steps    []any
	state    map[string]string
	staged   map[string]any
	sent     map[string]map[string]any // key -> the request as sent
	settled  map[string]any            // key -> the effective value published
	slots    map[string]slot
	actual   map[string]any
}

func newStepRun(c *Client, row contract.Scenario) *stepRun {
	steps, _ := row.Raw["steps"].([]any)
	return &stepRun{c: c, sid: row.ID, requests: row.Raw["requests"].(map[string]any), steps: steps,
		state: map[string]string{}, staged: map[string]any{}, sent: map[string]map[string]any{},
		settled: map[string]any{}, slots: map[string]slot{},
		actual: map[string]any{"published": []any{}, "cancelled": []any{}, "ignored": []any{},
			"states": map[string]any{}, "observations": []any{}, "uploadStatuses": []any{}}}
}

func (r *stepRun) add(list string, v any) { r.actual[list] = append(r.actual[list].([]any), v) }

func (r *stepRun) run() (map[string]any, error) {
	ops := map[string]func(map[string]any) error{
		"send": r.opSend, "wait": r.opWait, "release": r.opRelease, "receive": r.opReceive,
		"accept": r.opAccept, "cancel": r.opCancel, "failOpen": r.opFailOpen, "observe": r.opObserve,
		"upload": r.opUpload, "emit": r.opEmit,
	}
	for i, raw := range r.steps {
		step, _ := raw.(map[string]any)
		op, _ := step["op"].(string)
		if err := ops[op](step); err != nil {
			if _, isFailure := err.(*RowFailure); isFailure {
				return nil, Failf("steps[%d] (%s): %v", i, op, err)
			}
			return nil, err
		}
	}
	return r.actual, nil
}

func str(step map[string]any, name string) (string, error) {
	s, ok := step[name].(string)
	if !ok {
		return "", Failf("step %v: %s must be a string", step["op"], name)
	}
	return s, nil
}

func (r *stepRun) key(step map[string]any) (string, error) {
	k, ok := step["key"].(string)
	if !ok || !hasKey(r.requests, k) {
		return "", Failf("unknown request key %s", sdk.EncodeString(step["key"]))
	}
	return k, nil
}

func (r *stepRun) rid(key string) string { return fmt.Sprint(sdk.Path(r.requests[key], "id")) }

// request is the request as sent (else as it would be sent).
func (r *stepRun) request(key string) (map[string]any, error) {
	if m, ok := r.sent[key]; ok {
		return m, nil
	}
	raw, _ := r.requests[key].(map[string]any)
	prepared, err := r.c.Prepare(raw)
	if err != nil {
		return nil, err
	}
	if prepared, err = r.c.Checked(prepared, sdk.InterceptRequest); err != nil {
		return nil, err
	}
	r.sent[key] = prepared
	return prepared, nil
}

func (r *stepRun) mark(kind, key string) error { return r.c.Mark(r.sid, kind, r.rid(key)) }

func (r *stepRun) opSend(step map[string]any) error {
	key, err := r.key(step)
	if err != nil {
		return err
	}
	name, err := str(step, "slot")
	if err != nil {
		return err
	}
	msg, err := r.request(key)
	if err != nil {
		return err
	}
	bypass := step["bypassSDK"] == true
	r.slots[name] = slot{key, r.c.send(msg, bypass, r.c.Timeout(), nil)}
	if _, has := r.state[key]; !has && !bypass {
		r.state[key] = pending
	}
	return nil
}

func (r *stepRun) opWait(step map[string]any) error {
	key, err := r.key(step)
	if err != nil {
		return err
	}
	n, has := step["count"]
	if !has {
		n = 1
	}
	return r.c.Post("/wait", map[string]any{"id": r.rid(key), "count": n})
}

func (r *stepRun) opRelease(step map[string]any) error {
	key, err := r.key(step)
	if err != nil {
		return err
	}
	return r.c.Post("/release", map[string]any{"id": r.rid(key)})
}

func (r *stepRun) opReceive(step map[string]any) error {
	name, err := str(step, "slot")
	if err != nil {
		return err
	}
	s, ok := r.slots[name]
	if !ok {
		return Failf("slot %s was never sent", sdk.EncodeString(name))
	}
	reply, err := Result(s.call, r.c.Timeout(), fmt.Sprintf("%s: slot %s", r.sid, name))
	if err != nil {
		return Failf("slot %s: %v", name, err)
	}
	switch r.state[s.key] {
	case cancelled, staged, published:
		r.add("ignored", name)
		return nil
	}
	if reply != any(Malformed) {
		if problem := r.c.schemas.Check(sdk.InterceptResponse, reply); problem != "" {
			Logf("client", "%s: slot %s: staged a reply the schema refuses: %s", r.sid, name, problem)
		}
	}
	r.state[s.key] = staged
	r.staged[s.key] = reply
	return r.mark("acquired", s.key)
}

func (r *stepRun) publish(key string, state map[string]any, value any) error {
	rid := r.rid(key)
	r.add("published", rid)
	r.actual["states"].(map[string]any)[rid] = state
	r.settled[key] = value
	r.state[key] = published
	return r.mark("accepted", key)
}

var stateKeys = []string{"decision", "executed", "input", "messages", "flow", "result"}

func (r *stepRun) opAccept(step map[string]any) error {
	key, err := r.key(step)
	if err != nil {
		return err
	}
	if r.state[key] != staged {
		return nil
	}
	request, err := r.request(key)
	if err != nil {
		return err
	}
	reply := r.staged[key]
	delete(r.staged, key)
	out := r.c.evaluate(request, reply)
	if out.Unsupported != "" {
		return Unsupported(out.Unsupported)
	}
	if out.Reason != "" {
		// an operational failure: nothing is published; a later failOpen may publish
		Logf("client", "%s: %s: reply rejected: %s", r.sid, r.rid(key), out.Reason)
		r.state[key] = rejected
		return nil
	}
	state := map[string]any{}
	for _, k := range stateKeys {
		if v, has := out.Actual[k]; has {
			state[k] = v
		}
	}
	b := boundaryOf(request)
	return r.publish(key, state, sdk.EffectiveValue(b, out))
}

func boundaryOf(request map[string]any) *sdk.Boundary {
	t, _ := sdk.Path(request, "params", "event", "type").(string)
	return sdk.BoundaryFor(t)
}

func (r *stepRun) opCancel(step map[string]any) error {
	key, err := r.key(step)
	if err != nil {
		return err
	}
	if r.state[key] == cancelled {
		return nil
	}
	if err := r.mark("cancelled", key); err != nil {
		return err
	}
	r.add("cancelled", r.rid(key))
	delete(r.staged, key)
	r.state[key] = cancelled
	return nil
}

func (r *stepRun) opFailOpen(step map[string]any) error {
	key, err := r.key(step)
	if err != nil {
		return err
	}
	switch r.state[key] {
	case cancelled, staged, published:
		return nil
	}
	request := r.requests[key].(map[string]any)
	b := boundaryOf(request)
	original := b.Original(sdk.Object(sdk.Path(request, "params", "event")))
	state := map[string]any{"decision": "allow", "executed": b.Gated, "messages": []any{}}
	if b.Target == "input" {
		state["input"] = original
	}
	return r.publish(key, state, original)
}

func (r *stepRun) opObserve(step map[string]any) error {
	key, err := r.key(step)
	if err != nil {
		return err
	}
	subscription, err := str(step, "subscription")
	if err != nil {
		return err
	}
	request := r.requests[key].(map[string]any)
	b := boundaryOf(request)
	event := sdk.Object(sdk.Path(request, "params", "event"))
	value, has := r.settled[key]
	if !has {
		value = b.Original(event)
	}
	event, err = b.WithValue(event, value)
	if err != nil {
		return Unsupported(err.Error())
	}
	if items, has := step["items"]; has {
		event["items"] = sdk.Clone(items)
	}
	msg, err := r.c.Prepare(sdk.Observation(sdk.Path(request, "params", "protocolVersion"), event))
	if err != nil {
		return err
	}
	if msg, err = r.c.Checked(msg, ObserveNotification); err != nil {
		return err
	}
	if err := r.c.notify(msg, nil); err != nil {
		return err
	}
	r.add("observations", map[string]any{"eventId": event["id"], "subscription": subscription, "input": value})
	return nil
}

func (r *stepRun) opUpload(step map[string]any) error {
	alias, err := str(step, "ref")
	if err != nil {
		return err
	}
	sha, err := str(step, "sha256")
	if err != nil {
		return err
	}
	size, ok := sdk.Integer(step["size"])
	if !ok || size < 0 {
		return Failf("upload size must be a non-negative integer")
	}
	text, err := str(step, "bodyBase64")
	if err != nil {
		return err
	}
	data, err := decodeBase64(text)
	if err != nil {
		return Failf("bodyBase64 is not base64")
	}
	route := r.c.settings.Upload
	if block, ok := step["upload"].(map[string]any); ok {
		if route, err = stepRoute(block, r.sid, r.c.settings.Upload); err != nil {
			return Failf("%v", err)
		}
	}
	status, receipt, err := r.c.Upload(route, data, size, sha)
	if err != nil {
		return err
	}
	r.add("uploadStatuses", status)
	if receipt != nil {
		r.c.aliases[alias] = receipt["ref"].(string)
	}
	return nil
}

// stepRoute reads a step's own upload block: it replaces the config's
// wholesale (its endpoint defaults to the config's; no auth: no credential;
// no timeoutMs: the config's).
func stepRoute(block map[string]any, sid string, config contract.UploadRoute) (contract.UploadRoute, error) {
	b := sdk.Clone(block).(map[string]any)
	if _, has := b["timeoutMs"]; !has {
		b["timeoutMs"] = int64(config.Timeout / time.Millisecond)
	}
	return contract.ParseUploadRoute(b, "scenario "+sid, "upload.", config.Endpoint)
}

func (r *stepRun) opEmit(step map[string]any) error {
	if !r.c.stdio {
		return Failf("emit needs the stdio transport")
	}
	frame := step["response"]
	id := sdk.Path(frame, "id")
	arrived := r.c.strays.expect(id)
	if err := r.c.Post("/emit", map[string]any{"response": frame}); err != nil {
		return err
	}
	select {
	case <-arrived:
	case <-time.After(r.c.Timeout()):
		return Failf("the emitted frame %s never reached the reader", sdk.EncodeString(id))
	}
	if err := r.c.Mark(r.sid, "discarded", fmt.Sprint(id)); err != nil {
		return err
	}
	r.add("ignored", fmt.Sprintf("unsolicited:%v", id))
	return nil
}
