package lifecycle

// The compaction suite (docs/COMPACTION.md): the lifecycle chain model at
// context.compact.before, then, when something was compacted, at
// context.compact.after. The client never reads a row's expected or proof.

import (
	"fmt"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

var compactionPhases = []string{"before", "after"}

func isNegative(row contract.Scenario) bool { return hasKey(row.Raw, "negative") }

// CompactionServer is the AHP side of a compaction server: it serves the
// boundary requests of every run, never held.
type CompactionServer struct {
	schemas  *sdk.Schemas
	proc     *contract.SuiteServer
	requests map[string]rowKey // "<run id>:<phase>" -> the run and phase (the first wins)
}

// NewCompactionServer indexes the runs' boundary ids.
func NewCompactionServer(schemas *sdk.Schemas, proc *contract.SuiteServer, rows []contract.Scenario) *CompactionServer {
	s := &CompactionServer{schemas: schemas, proc: proc, requests: map[string]rowKey{}}
	for _, row := range rows {
		if isNegative(row) {
			continue
		}
		for _, phase := range compactionPhases {
			id := row.ID + ":" + phase
			if _, seen := s.requests[id]; !seen {
				s.requests[id] = rowKey{row, phase}
			}
		}
	}
	return s
}

// Dispatch answers one parsed message.
func (s *CompactionServer) Dispatch(message any) (answer contract.SuiteAnswer) {
	msg, ok := message.(map[string]any)
	if !ok {
		return reply(contract.RPCError(nil, contract.InvalidRequest, "not a single JSON-RPC object", nil))
	}
	method, _ := msg["method"].(string)
	if method == "hooks/observe" {
		return s.observe(msg)
	}
	id, hasID := msg["id"]
	if !hasID {
		logf("server", "ignored a notification %s", sdk.EncodeString(msg["method"]))
		return contract.SuiteAnswer{}
	}
	defer func() {
		if r := recover(); r != nil {
			logf("server", "internal error: %v", r)
			answer = reply(contract.RPCError(id, contract.InternalError, "internal error", nil))
		}
	}()
	switch method {
	case "hooks/intercept":
		return s.intercept(msg)
	case "hooks/capabilities":
		return reply(map[string]any{"jsonrpc": "2.0", "id": id, "result": sdk.DiscoveryResult()})
	}
	return reply(contract.RPCError(id, contract.MethodNotFound, "method not found", nil))
}

// refusal says why msg is refused unrecorded ("": it is served), checking
// the schema, the id, then text parts carrying body, in that order.
func (s *CompactionServer) refusal(msg map[string]any) string {
	if problem := s.schemas.Check(sdk.InterceptRequest, msg); problem != "" {
		return "invalid intercept request: " + problem
	}
	id, _ := msg["id"].(string)
	if _, ok := s.requests[id]; !ok {
		return "no run has this boundary id"
	}
	if sdk.CarriesBody(msg["params"]) {
		return "a text part carries body (compaction text is inline)"
	}
	return ""
}

func (s *CompactionServer) intercept(msg map[string]any) contract.SuiteAnswer {
	id := msg["id"]
	if problem := s.refusal(msg); problem != "" {
		logf("server", "intercept %s refused: %s", sdk.EncodeString(id), problem)
		return reply(contract.RPCError(id, contract.InvalidParams, problem, nil))
	}
	sid := id.(string)
	found := s.requests[sid]
	n := s.proc.Entries.Record(map[string]any{"kind": contract.EntryReceived, "id": id, "message": msg}, "id")
	replied := func() {
		s.proc.Entries.Record(map[string]any{"kind": contract.EntryReplied, "id": id}, "id")
	}
	seq, _ := sdk.Path(found.row.Raw, "responseSequences", found.key).([]any)
	if len(seq) == 0 {
		text := fmt.Sprintf("run %s has no responseSequences.%s", sdk.EncodeString(found.row.ID), found.key)
		logf("server", "intercept %s: %s", sdk.EncodeString(id), text)
		a := reply(contract.RPCError(id, contract.InternalError, text, nil))
		a.Before = replied
		return a
	}
	response := seq[min(n, len(seq))-1]
	switch FaultOf(response) {
	case FaultTimeout:
		logf("server", "intercept %s: scripted timeout (receipt %d)", sid, n)
		return contract.SuiteAnswer{Never: true}
	case FaultServerError:
		a := reply(contract.RPCError(id, contract.InternalError, "scripted server error", nil))
		a.Status, a.Before = 500, replied
		return a
	case FaultMalformed:
		return contract.SuiteAnswer{Raw: MalformedBody, HasReply: true, Before: replied}
	}
	a := reply(response)
	a.Before = replied
	return a
}

// Manifest is the core discovery manifest, as hooks/capabilities answers.
func (s *CompactionServer) Manifest() map[string]any { return sdk.DiscoveryManifest() }

// observe records every schema-valid hooks/observe and answers 204.
func (s *CompactionServer) observe(msg map[string]any) contract.SuiteAnswer {
	if problem := s.schemas.Check(ObserveNotification, msg); problem != "" {
		logf("server", "invalid observation: %s", problem)
		return contract.SuiteAnswer{Status: 400}
	}
	event, _ := sdk.Path(msg, "params", "event").(map[string]any)
	s.proc.Entries.Record(map[string]any{"kind": contract.EntryObserved, "eventId": event["id"],
		"event": sdk.Clone(event), "message": sdk.Clone(msg)}, "eventId")
	return contract.SuiteAnswer{}
}

// compactionRow runs one row of the compaction set.
func (c *Client) compactionRow(row contract.Scenario) (map[string]any, error) {
	if isNegative(row) {
		return c.negative(row)
	}
	return c.compact(row)
}

// negative sends the row's request unchanged (no SDK check) and reports the
// JSON-RPC error code of its answer (nil when it has none).
func (c *Client) negative(row contract.Scenario) (map[string]any, error) {
	call := c.channel.Call(row.Raw["negative"], c.timeout())
	answer, err := result(call, c.timeout(), row.ID)
	if err != nil {
		return nil, failf("negative: %v", err)
	}
	code := sdk.Path(answer, "error", "code")
	if _, isInt := sdk.Integer(code); answer == any(malformed) || !isInt {
		code = nil
	}
	return map[string]any{"error": code}, nil
}

func (c *Client) subscriptions(row contract.Scenario, phase string) ([]map[string]any, error) {
	raw, has := row.Raw[phase]
	if !has {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, failf("%s must be an array of subscriptions", phase)
	}
	return parseSubscriptions(list)
}

// parseSubscriptions checks a chain's subscriptions.
func parseSubscriptions(list []any) ([]map[string]any, error) {
	var subs []map[string]any
	for _, raw := range list {
		sub, _ := raw.(map[string]any)
		if _, isString := sub["id"].(string); !isString {
			return nil, failf("each chain subscription needs a string id")
		}
		if mode := sub["mode"]; mode != "intercept" && mode != "observe" {
			return nil, &rowUnsupported{"chain subscription mode " + sdk.EncodeString(mode)}
		}
		subs = append(subs, sub)
	}
	return subs, nil
}

// chainOn is a chain of subs on request (prepared and checked here) against
// a server that never holds.
func (c *Client) chainOn(sid string, subs []map[string]any, request map[string]any) (*chainRun, error) {
	prepared, err := c.prepare(request)
	if err != nil {
		return nil, err
	}
	if prepared, err = c.checked(prepared, sdk.InterceptRequest); err != nil {
		return nil, err
	}
	run := &chainRun{c: c, sid: sid, subscriptions: subs, noRelease: true, request: prepared,
		boundary: boundaryOf(prepared)}
	run.rid, _ = prepared["id"].(string)
	if run.boundary == nil {
		return nil, &rowUnsupported{fmt.Sprintf("event type %v is not implemented by ahp-go",
			sdk.EncodeString(sdk.Path(prepared, "params", "event", "type")))}
	}
	return run, nil
}

func chainActual(s *settlement) map[string]any {
	if s == nil {
		return map[string]any{"called": []any{}, "failures": []any{}, "observations": []any{}}
	}
	return map[string]any{"called": s.called, "failures": s.failures, "observations": s.observations}
}

// compact is one run (docs/COMPACTION.md, "What the host (client) does for a run").
func (c *Client) compact(row contract.Scenario) (map[string]any, error) {
	request, ok := row.Raw["request"].(map[string]any)
	if !ok {
		return nil, failf("the run has no request object")
	}
	if sdk.Path(request, "params", "event", "type") != sdk.CompactBefore {
		return nil, &rowUnsupported{"the run's request is not a " + sdk.CompactBefore + " intercept"}
	}
	beforeSubs, err := c.subscriptions(row, "before")
	if err != nil {
		return nil, err
	}
	afterSubs, err := c.subscriptions(row, "after")
	if err != nil {
		return nil, err
	}
	before, err := c.chainOn(row.ID, beforeSubs, request)
	if err != nil {
		return nil, err
	}
	settled, err := before.settle()
	if err != nil {
		return nil, err
	}
	var res map[string]any
	if !settled.failedClosed {
		var problem string
		if res, problem = sdk.SettledResult(c.schemas, before.request, before.boundary, settled.value, settled.state); problem != "" {
			return nil, failf("the settled before boundary has no result: %s", problem)
		}
	}
	items, _ := sdk.Path(before.request, "params", "event", "items").([]any)
	host := sdk.Compact(res, settled.supplier, row.ID+":summary", len(items), settled.value)
	var after *settlement
	if host.Applied {
		msg := sdk.AfterRequest(row.ID+":after", before.request, host.Summary, host.Execution,
			row.Raw["afterObserveOnly"] == true)
		chain, err := c.chainOn(row.ID, afterSubs, msg)
		if err != nil {
			return nil, err
		}
		s, err := chain.settle()
		if err != nil {
			return nil, err
		}
		after = &s
	}
	// a fail-closed failure at the after boundary prevents the application too
	applied := host.Applied && !(after != nil && after.failedClosed)
	actual := map[string]any{"applied": applied, "instructions": settled.value,
		"summary": nil, "execution": nil, "provenance": nil,
		"before": chainActual(&settled), "after": chainActual(after)}
	if applied {
		actual["summary"], actual["execution"], actual["provenance"] = after.value, host.Execution, host.Provenance
	}
	if actual["instructions"] == nil {
		actual["instructions"] = []any{}
	}
	return actual, nil
}
