package steps

import (
	"errors"
	"fmt"
	"time"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// Settlement is how a chain settled: who was called, failed and notified,
// the settled effective value, the state the last accepted reply left (nil:
// none was accepted), whether a fail-closed failure ended it, and the
// subscription whose accepted return bound the carried candidate ("" none).
type Settlement struct {
	Called, Failures, Observations []any
	Value                          any
	State                          map[string]any
	FailedClosed                   bool
	Supplier                       string
}

func (s Settlement) actual() map[string]any {
	return map[string]any{"called": s.Called, "failures": s.Failures,
		"observations": s.Observations, "input": s.Value}
}

// Chain is one chain (docs/LIFECYCLE.md, "Chains"): a request through
// serial subscriptions against the run's server.
type Chain struct {
	c             *Client
	sid, rid      string
	subscriptions []map[string]any
	interrupt     bool
	holdObservers bool
	noRelease     bool // the server never holds: no /release before the first call
	request       map[string]any
	boundary      *sdk.Boundary
}

// Request is the chain's request, prepared and checked.
func (r *Chain) Request() map[string]any { return r.request }

// Boundary is the request's boundary.
func (r *Chain) Boundary() *sdk.Boundary { return r.boundary }

// ParseSubscriptions checks a chain's subscriptions.
func ParseSubscriptions(list []any) ([]map[string]any, error) {
	var subs []map[string]any
	for _, raw := range list {
		sub, _ := raw.(map[string]any)
		if _, isString := sub["id"].(string); !isString {
			return nil, Failf("each chain subscription needs a string id")
		}
		if mode := sub["mode"]; mode != "intercept" && mode != "observe" {
			return nil, Unsupported("chain subscription mode " + sdk.EncodeString(mode))
		}
		subs = append(subs, sub)
	}
	return subs, nil
}

// ChainOn is a chain of subs on request (prepared and checked here) against
// a server that never holds.
func (c *Client) ChainOn(sid string, subs []map[string]any, request map[string]any) (*Chain, error) {
	prepared, err := c.Prepare(request)
	if err != nil {
		return nil, err
	}
	if prepared, err = c.Checked(prepared, sdk.InterceptRequest); err != nil {
		return nil, err
	}
	run := &Chain{c: c, sid: sid, subscriptions: subs, noRelease: true, request: prepared,
		boundary: boundaryOf(prepared)}
	run.rid, _ = prepared["id"].(string)
	if run.boundary == nil {
		return nil, Unsupported(fmt.Sprintf("event type %v is not implemented by ahp-go",
			sdk.EncodeString(sdk.Path(prepared, "params", "event", "type"))))
	}
	return run, nil
}

// runChain runs a step row's chain: requests.a through its subscriptions.
func (c *Client) runChain(row contract.Scenario) (map[string]any, error) {
	chain, _ := row.Raw["chain"].(map[string]any)
	subs, ok := chain["subscriptions"].([]any)
	if !ok {
		return nil, Failf("chain.subscriptions must be an array")
	}
	run := &Chain{c: c, sid: row.ID, interrupt: chain["interrupt"] == true,
		holdObservers: chain["holdObservers"] == true}
	var err error
	if run.subscriptions, err = ParseSubscriptions(subs); err != nil {
		return nil, err
	}
	raw, _ := sdk.Path(row.Raw, "requests", "a").(map[string]any)
	request, err := c.Prepare(raw)
	if err != nil {
		return nil, err
	}
	if run.request, err = c.Checked(request, sdk.InterceptRequest); err != nil {
		return nil, err
	}
	run.boundary = boundaryOf(run.request)
	run.rid, _ = run.request["id"].(string)
	s, err := run.Settle()
	if err != nil {
		return nil, err
	}
	return s.actual(), nil
}

func (r *Chain) mark(kind string) error { return r.c.Mark(r.sid, kind, r.rid) }

// deadline is an intercept subscription's own timeoutMs [ext], else the config's.
func (r *Chain) deadline(sub map[string]any) (time.Duration, error) {
	v, has := sub["timeoutMs"]
	if !has {
		return r.c.Timeout(), nil
	}
	n, ok := sdk.Integer(v)
	if !ok || n < 1 {
		return 0, Failf("subscription %v: timeoutMs must be a positive integer", sub["id"])
	}
	return time.Duration(n) * time.Millisecond, nil
}

// Settle runs the chain to its settlement (docs/LIFECYCLE.md, "Chains"):
// the intercept subscriptions in turn, /mark chain-settled, then the
// notifications of the observers and of the intercepts not called.
func (r *Chain) Settle() (Settlement, error) {
	c, b := r.c, r.boundary
	event := sdk.Object(sdk.Path(r.request, "params", "event"))
	original := b.Original(event)
	value := sdk.Clone(original)
	var state map[string]any // nil: the request's own
	s := Settlement{Called: []any{}, Failures: []any{}, Observations: []any{}}
	var intercepts []map[string]any
	for _, sub := range r.subscriptions {
		if sub["mode"] == "intercept" {
			intercepts = append(intercepts, sub)
		}
	}
	interrupt := r.interrupt && len(intercepts) > 0
	if len(intercepts) > 0 && !interrupt && !r.noRelease {
		if err := c.Post("/release", map[string]any{"id": r.rid}); err != nil {
			return s, err
		}
	}
	called := map[any]bool{}
	for _, sub := range intercepts {
		msg, err := sdk.ChainRequest(r.request, b, value, state, sub["content"])
		if err != nil {
			return s, Unsupported(err.Error())
		}
		if msg, err = c.Checked(msg, sdk.InterceptRequest); err != nil {
			return s, err
		}
		deadline, err := r.deadline(sub)
		if err != nil {
			return s, err
		}
		ch := c.channelFor(sub["backend"])
		call := c.send(msg, false, deadline, ch)
		s.Called = append(s.Called, sub["id"])
		called[sub["id"]] = true
		if interrupt {
			return r.interrupted(call, s.Called, original, ch == nil, deadline)
		}
		out, reply := r.outcome(msg, call, deadline)
		if out.Unsupported != "" {
			return s, Unsupported(out.Unsupported)
		}
		if out.Reason != "" {
			Logf("client", "%s: %v failed: %s", r.sid, sub["id"], out.Reason)
			s.Failures = append(s.Failures, sub["id"])
			if sub["failurePolicy"] == "fail-closed" {
				value = sdk.Clone(original) // a fail-closed failure denies
				s.FailedClosed = true
				break
			}
			continue
		}
		value = sdk.EffectiveValue(b, out)
		state = out.State
		if state == nil || state["candidate"] == nil {
			s.Supplier = ""
		} else if hasReturn(reply) {
			s.Supplier, _ = sub["id"].(string) // its return bound the candidate
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
			return s, Unsupported(err.Error())
		}
		if note, err = c.Prepare(note); err != nil {
			return s, err
		}
		if note, err = c.Checked(note, ObserveNotification); err != nil {
			return s, err
		}
		if err := c.notify(note, c.channelFor(sub["backend"])); err != nil {
			return s, err
		}
		s.Observations = append(s.Observations, sub["id"])
	}
	s.Value, s.State = value, state
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
func (r *Chain) outcome(msg map[string]any, call *contract.Call, deadline time.Duration) (sdk.Outcome, any) {
	reply, err := Result(call, deadline, r.sid)
	if err != nil {
		return sdk.Outcome{Actual: map[string]any{"rejected": true}, Reason: "no reply: " + err.Error()}, nil
	}
	return r.c.evaluate(msg, reply), reply
}

// interrupted: interrupt while the first call is in flight; once the server
// has it, the boundary settles with the original value and the late reply is
// dropped (a call to another backend leaves the server nothing to wait for).
func (r *Chain) interrupted(call *contract.Call, called []any, original any, atServer bool,
	deadline time.Duration) (Settlement, error) {
	s := Settlement{Called: called, Failures: []any{}, Observations: []any{}, Value: original}
	if atServer {
		if err := r.c.Post("/wait", map[string]any{"id": r.rid, "count": r.c.sends[r.rid]}); err != nil {
			return s, err
		}
	}
	if err := r.mark("cancelled"); err != nil {
		return s, err
	}
	if err := r.mark("chain-settled"); err != nil {
		return s, err
	}
	if err := r.c.Post("/release", map[string]any{"id": r.rid}); err != nil {
		return s, err
	}
	if _, err := call.Result(deadline); err != nil && !errors.Is(err, nil) {
		Logf("client", "%s: the interrupted call's reply: %v", r.sid, err)
	}
	return s, nil
}
