// Package compaction is the compaction suite (docs/COMPACTION.md): the
// step engine's chains at context.compact.before, then, when something was
// compacted, at context.compact.after. The client never reads a row's
// expected or proof.
package compaction

import (
	"fmt"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps"
	"ahp-interop/adapters/go/sdk"
)

// Name is the config's suite.
const Name = "compaction"

// Suite registers the compaction suite: both lifecycle commands, on the
// step engine. Its configs carry no upload blocks (compaction text is
// inline).
var Suite = steps.Suite{
	Spec: contract.SuiteSpec{Name: Name},
	// the engine's and the elicitation definitions (a schemaDir without them exits 2)
	ClientSchemas: append(steps.ClientSchemas(), sdk.ElicitationDefinitions()...),
	ServerSchemas: steps.ServerSchemas(),
	Server: func(schemas *sdk.Schemas, proc *contract.SuiteServer) (contract.SuiteDispatcher, error) {
		return NewServer(schemas, proc, proc.Settings.Scenarios), nil
	},
	Rows: func() steps.Rows { return rows{} },
}.Registration()

var phases = []string{"before", "after"}

func isNegative(row contract.Scenario) bool { _, has := row.Raw["negative"]; return has }

// runPhase is a run and one of its phases.
type runPhase struct {
	row   contract.Scenario
	phase string
}

// Server is the AHP side of a compaction server: it serves the boundary
// requests of every run, never held.
type Server struct {
	schemas  *sdk.Schemas
	proc     *contract.SuiteServer
	requests map[string]runPhase // "<run id>:<phase>" -> the run and phase (the first wins)
}

// NewServer indexes the runs' boundary ids.
func NewServer(schemas *sdk.Schemas, proc *contract.SuiteServer, rows []contract.Scenario) *Server {
	s := &Server{schemas: schemas, proc: proc, requests: map[string]runPhase{}}
	for _, row := range rows {
		if isNegative(row) {
			continue
		}
		for _, phase := range phases {
			id := row.ID + ":" + phase
			if _, seen := s.requests[id]; !seen {
				s.requests[id] = runPhase{row, phase}
			}
		}
	}
	return s
}

// Dispatch answers one parsed message.
func (s *Server) Dispatch(message any) (answer contract.SuiteAnswer) {
	msg, ok := message.(map[string]any)
	if !ok {
		return steps.Reply(contract.RPCError(nil, contract.InvalidRequest, "not a single JSON-RPC object", nil))
	}
	method, _ := msg["method"].(string)
	if method == "hooks/observe" {
		return s.observe(msg)
	}
	id, hasID := msg["id"]
	if !hasID {
		steps.Logf("server", "ignored a notification %s", sdk.EncodeString(msg["method"]))
		return contract.SuiteAnswer{}
	}
	defer func() {
		if r := recover(); r != nil {
			steps.Logf("server", "internal error: %v", r)
			answer = steps.Reply(contract.RPCError(id, contract.InternalError, "internal error", nil))
		}
	}()
	switch method {
	case "hooks/intercept":
		return s.intercept(msg)
	case "hooks/capabilities":
		return steps.Reply(map[string]any{"jsonrpc": "2.0", "id": id, "result": sdk.DiscoveryResult()})
	}
	return steps.Reply(contract.RPCError(id, contract.MethodNotFound, "method not found", nil))
}

// refusal says why msg is refused unrecorded ("": it is served), checking
// the schema, the id, then text parts carrying body, in that order.
func (s *Server) refusal(msg map[string]any) string {
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

func (s *Server) intercept(msg map[string]any) contract.SuiteAnswer {
	id := msg["id"]
	if problem := s.refusal(msg); problem != "" {
		steps.Logf("server", "intercept %s refused: %s", sdk.EncodeString(id), problem)
		return steps.Reply(contract.RPCError(id, contract.InvalidParams, problem, nil))
	}
	sid := id.(string)
	found := s.requests[sid]
	n := s.proc.Entries.Record(map[string]any{"kind": contract.EntryReceived, "id": id, "message": msg}, "id")
	replied := func() {
		s.proc.Entries.Record(map[string]any{"kind": contract.EntryReplied, "id": id}, "id")
	}
	seq, _ := sdk.Path(found.row.Raw, "responseSequences", found.phase).([]any)
	if len(seq) == 0 {
		text := fmt.Sprintf("run %s has no responseSequences.%s", sdk.EncodeString(found.row.ID), found.phase)
		steps.Logf("server", "intercept %s: %s", sdk.EncodeString(id), text)
		a := steps.Reply(contract.RPCError(id, contract.InternalError, text, nil))
		a.Before = replied
		return a
	}
	response := seq[min(n, len(seq))-1]
	switch steps.FaultOf(response) {
	case steps.FaultTimeout:
		steps.Logf("server", "intercept %s: scripted timeout (receipt %d)", sid, n)
		return contract.SuiteAnswer{Never: true}
	case steps.FaultServerError:
		a := steps.Reply(contract.RPCError(id, contract.InternalError, "scripted server error", nil))
		a.Status, a.Before = 500, replied
		return a
	case steps.FaultMalformed:
		return contract.SuiteAnswer{Raw: steps.MalformedBody, HasReply: true, Before: replied}
	}
	a := steps.Reply(response)
	a.Before = replied
	return a
}

// Manifest is the core discovery manifest, as hooks/capabilities answers.
func (s *Server) Manifest() map[string]any { return sdk.DiscoveryManifest() }

// observe records every schema-valid hooks/observe and answers 204.
func (s *Server) observe(msg map[string]any) contract.SuiteAnswer {
	if problem := s.schemas.Check(steps.ObserveNotification, msg); problem != "" {
		steps.Logf("server", "invalid observation: %s", problem)
		return contract.SuiteAnswer{Status: 400}
	}
	event, _ := sdk.Path(msg, "params", "event").(map[string]any)
	s.proc.Entries.Record(map[string]any{"kind": contract.EntryObserved, "eventId": event["id"],
		"event": sdk.Clone(event), "message": sdk.Clone(msg)}, "eventId")
	return contract.SuiteAnswer{}
}

// rows are one client run's rows: each a run, or a negative.
type rows struct{}

func (rows) Start(*steps.Client) {}

// Report carries the content uploads ([]: a compaction config has no content sources).
func (rows) Report(c *steps.Client, report map[string]any) {
	report["contentUploads"] = c.ContentUploads()
}

// Row runs one row of the compaction set.
func (rows) Row(c *steps.Client, row contract.Scenario) (map[string]any, error) {
	if isNegative(row) {
		return negative(c, row)
	}
	return compact(c, row)
}

// negative sends the row's request unchanged (no SDK check) and reports the
// JSON-RPC error code of its answer (nil when it has none).
func negative(c *steps.Client, row contract.Scenario) (map[string]any, error) {
	call := c.Channel().Call(row.Raw["negative"], c.Timeout())
	answer, err := steps.Result(call, c.Timeout(), row.ID)
	if err != nil {
		return nil, steps.Failf("negative: %v", err)
	}
	code := sdk.Path(answer, "error", "code")
	if _, isInt := sdk.Integer(code); answer == any(steps.Malformed) || !isInt {
		code = nil
	}
	return map[string]any{"error": code}, nil
}

func subscriptions(row contract.Scenario, phase string) ([]map[string]any, error) {
	raw, has := row.Raw[phase]
	if !has {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, steps.Failf("%s must be an array of subscriptions", phase)
	}
	return steps.ParseSubscriptions(list)
}

func chainActual(s *steps.Settlement) map[string]any {
	if s == nil {
		return map[string]any{"called": []any{}, "failures": []any{}, "observations": []any{}}
	}
	return map[string]any{"called": s.Called, "failures": s.Failures, "observations": s.Observations}
}

// compact is one run (docs/COMPACTION.md, "What the host (client) does for a run").
func compact(c *steps.Client, row contract.Scenario) (map[string]any, error) {
	request, ok := row.Raw["request"].(map[string]any)
	if !ok {
		return nil, steps.Failf("the run has no request object")
	}
	if sdk.Path(request, "params", "event", "type") != sdk.CompactBefore {
		return nil, steps.Unsupported("the run's request is not a " + sdk.CompactBefore + " intercept")
	}
	beforeSubs, err := subscriptions(row, "before")
	if err != nil {
		return nil, err
	}
	afterSubs, err := subscriptions(row, "after")
	if err != nil {
		return nil, err
	}
	before, err := c.ChainOn(row.ID, beforeSubs, request)
	if err != nil {
		return nil, err
	}
	settled, err := before.Settle()
	if err != nil {
		return nil, err
	}
	var res map[string]any
	if !settled.FailedClosed {
		var problem string
		if res, problem = sdk.SettledResult(c.Schemas(), before.Request(), before.Boundary(), settled.Value, settled.State); problem != "" {
			return nil, steps.Failf("the settled before boundary has no result: %s", problem)
		}
	}
	items, _ := sdk.Path(before.Request(), "params", "event", "items").([]any)
	host := sdk.Compact(res, settled.Supplier, row.ID+":summary", len(items), settled.Value)
	var after *steps.Settlement
	if host.Applied {
		msg := sdk.AfterRequest(row.ID+":after", before.Request(), host.Summary, host.Execution,
			row.Raw["afterObserveOnly"] == true)
		chain, err := c.ChainOn(row.ID, afterSubs, msg)
		if err != nil {
			return nil, err
		}
		s, err := chain.Settle()
		if err != nil {
			return nil, err
		}
		after = &s
	}
	// a fail-closed failure at the after boundary prevents the application too
	applied := host.Applied && !(after != nil && after.FailedClosed)
	actual := map[string]any{"applied": applied, "instructions": settled.Value,
		"summary": nil, "execution": nil, "provenance": nil,
		"before": chainActual(&settled), "after": chainActual(after)}
	if applied {
		actual["summary"], actual["execution"], actual["provenance"] = after.Value, host.Execution, host.Provenance
	}
	if actual["instructions"] == nil {
		actual["instructions"] = []any{}
	}
	return actual, nil
}
