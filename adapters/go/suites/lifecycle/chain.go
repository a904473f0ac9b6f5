package lifecycle

import (
	"errors"
	"time"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// settlement is how a chain settled: who was called, failed and notified,
// the settled effective value, the state the last accepted reply left (nil:
// none was accepted), whether a fail-closed failure ended it, and the
// subscription whose accepted return bound the carried candidate ("" none).
type settlement struct {
	called, failures, observations []any
	value                          any
	state                          map[string]any
	failedClosed                   bool
	supplier                       string
}

func (s settlement) actual() map[string]any {
	return map[string]any{"called": s.called, "failures": s.failures,
		"observations": s.observations, "input": s.value}
}

// chainRun is one chain (docs/LIFECYCLE.md, "Chains"): requests.a through
// serial subscriptions against the run's server.
type chainRun struct {
	c             *Client
	sid, rid      string
	subscriptions []map[string]any
	interrupt     bool
	holdObservers bool
	noRelease     bool // the server never holds: no /release before the first call
	request       map[string]any
	boundary      *sdk.Boundary
}

func (c *Client) runChain(row contract.Scenario) (map[string]any, error) {
	chain, _ := row.Raw["chain"].(map[string]any)
	subs, ok := chain["subscriptions"].([]any)
	if !ok {
		return nil, failf("chain.subscriptions must be an array")
	}
	run := &chainRun{c: c, sid: row.ID, interrupt: chain["interrupt"] == true,
		holdObservers: chain["holdObservers"] == true}
	var err error
	if run.subscriptions, err = parseSubscriptions(subs); err != nil {
		return nil, err
	}
	raw, _ := sdk.Path(row.Raw, "requests", "a").(map[string]any)
	request, err := c.prepare(raw)
	if err != nil {
		return nil, err
	}
	if run.request, err = c.checked(request, sdk.InterceptRequest); err != nil {
		return nil, err
	}
	run.boundary = boundaryOf(run.request)
	run.rid, _ = run.request["id"].(string)
	s, err := run.settle()
	if err != nil {
		return nil, err
	}
	return s.actual(), nil
}

func (r *chainRun) mark(kind string) error { return r.c.mark(r.sid, kind, r.rid) }

// deadline is an intercept subscription's own timeoutMs [ext], else the config's.
func (r *chainRun) deadline(sub map[string]any) (time.Duration, error) {
	v, has := sub["timeoutMs"]
	if !has {
		return r.c.timeout(), nil
	}
	n, ok := sdk.Integer(v)
	if !ok || n < 1 {
		return 0, failf("subscription %v: timeoutMs must be a positive integer", sub["id"])
	}
	return time.Duration(n) * time.Millisecond, nil
}

func (r *chainRun) settle() (settlement, error) {
	c, b := r.c, r.boundary
	event := sdk.Object(sdk.Path(r.request, "params", "event"))
	original := b.Original(event)
	value := sdk.Clone(original)
	var state map[string]any // nil: the request's own
	s := settlement{called: []any{}, failures: []any{}, observations: []any{}}
	var intercepts []map[string]any
	for _, sub := range r.subscriptions {
		if sub["mode"] == "intercept" {
			intercepts = append(intercepts, sub)
		}
	}
	interrupt := r.interrupt && len(intercepts) > 0
	if len(intercepts) > 0 && !interrupt && !r.noRelease {
		if err := c.post("/release", map[string]any{"id": r.rid}); err != nil {
			return s, err
		}
	}
	called := map[any]bool{}
	for _, sub := range intercepts {
		msg, err := sdk.ChainRequest(r.request, b, value, state, sub["content"])
		if err != nil {
			return s, &rowUnsupported{err.Error()}
		}
		if msg, err = c.checked(msg, sdk.InterceptRequest); err != nil {
			return s, err
		}
		deadline, err := r.deadline(sub)
		if err != nil {
			return s, err
		}
		ch := c.channelFor(sub["backend"])
		call := c.send(msg, false, deadline, ch)
		s.called = append(s.called, sub["id"])
		called[sub["id"]] = true
		if interrupt {
			return r.interrupted(call, s.called, original, ch == nil, deadline)
		}
		out, reply := r.outcome(msg, call, deadline)
		if out.Unsupported != "" {
			return s, &rowUnsupported{out.Unsupported}
		}
		if out.Reason != "" {
			logf("client", "%s: %v failed: %s", r.sid, sub["id"], out.Reason)
			s.failures = append(s.failures, sub["id"])
			if sub["failurePolicy"] == "fail-closed" {
				value = sdk.Clone(original) // a fail-closed failure denies
				s.failedClosed = true
				break
			}
			continue
		}
		value = sdk.EffectiveValue(b, out)
		state = out.State
		if state == nil || state["candidate"] == nil {
			s.supplier = ""
		} else if hasReturn(reply) {
			s.supplier, _ = sub["id"].(string) // its return bound the candidate
		}
		if sdk.ShortCircuits(out) {
			break
		}
	}
	if err := r.mark("chain-settled"); err != nil {
		return s, err
	}
	for _, sub := range r.subscriptions {
		if sub["mode"] != "observe" && called[sub["id"]] {
			continue
		}
		if r.holdObservers {
			if err := r.mark("observer-blocked"); err != nil {
				return s, err
			}
		}
		note, err := sdk.ChainObservation(r.request, b, value, sub["content"])
		if err != nil {
			return s, &rowUnsupported{err.Error()}
		}
		if note, err = c.prepare(note); err != nil {
			return s, err
		}
		if note, err = c.checked(note, ObserveNotification); err != nil {
			return s, err
		}
		if err := c.notify(note, c.channelFor(sub["backend"])); err != nil {
			return s, err
		}
		s.observations = append(s.observations, sub["id"])
	}
	s.value, s.state = value, state
	return s, nil
}

// hasReturn: the reply's effects include a return.
func hasReturn(reply any) bool {
	effects, _ := sdk.Path(reply, "result", "effects").([]any)
	for _, e := range effects {
		if sdk.Path(e, "type") == "return" {
			return true
		}
	}
	return false
}

// outcome is the call's reply evaluated by the core rules; every operational
// failure (unreachable, a status other than 200, not JSON, another id, a
// JSON-RPC error, the deadline, a rejection) is a rejected outcome.
func (r *chainRun) outcome(msg map[string]any, call *contract.Call, deadline time.Duration) (sdk.Outcome, any) {
	reply, err := result(call, deadline, r.sid)
	if err != nil {
		return sdk.Outcome{Actual: map[string]any{"rejected": true}, Reason: "no reply: " + err.Error()}, nil
	}
	return r.c.evaluate(msg, reply), reply
}

// interrupted: interrupt while the first call is in flight; once the server
// has it, the boundary settles with the original value and the late reply is
// dropped (a call to another backend leaves the server nothing to wait for).
func (r *chainRun) interrupted(call *contract.Call, called []any, original any, atServer bool,
	deadline time.Duration) (settlement, error) {
	s := settlement{called: called, failures: []any{}, observations: []any{}, value: original}
	if atServer {
		if err := r.c.post("/wait", map[string]any{"id": r.rid, "count": r.c.sends[r.rid]}); err != nil {
			return s, err
		}
	}
	if err := r.mark("cancelled"); err != nil {
		return s, err
	}
	if err := r.mark("chain-settled"); err != nil {
		return s, err
	}
	if err := r.c.post("/release", map[string]any{"id": r.rid}); err != nil {
		return s, err
	}
	if _, err := call.Result(deadline); err != nil && !errors.Is(err, nil) {
		logf("client", "%s: the interrupted call's reply: %v", r.sid, err)
	}
	return s, nil
}
