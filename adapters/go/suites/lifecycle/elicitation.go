package lifecycle

// The elicitation suite (docs/ELICITATION.md): a receiver that validates
// complete elicitation events, and a host that applies a backend's effects
// at both elicitation boundaries atomically. The client never reads a row's
// expected or responses.

import (
	"errors"
	"fmt"
	"time"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// UnauthorizedTokenEnv holds an upload token the receiver does not accept.
const UnauthorizedTokenEnv = "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN"

func noEffect(id any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"protocolVersion": "draft", "effects": []any{}}}
}

// ElicitationServer is the AHP side of an elicitation server.
type ElicitationServer struct {
	proc      *contract.SuiteServer
	receiver  *sdk.Receiver
	responses map[string]any // request id -> the scripted reply (the first row naming it wins)
}

// NewElicitationServer indexes the rows' scripted responses.
func NewElicitationServer(schemas *sdk.Schemas, proc *contract.SuiteServer, rows []contract.Scenario,
	authenticatedSource string) *ElicitationServer {
	s := &ElicitationServer{proc: proc, responses: map[string]any{},
		receiver: sdk.NewReceiver(schemas, proc.Store.Has, authenticatedSource)}
	for _, row := range rows {
		responses, _ := row.Raw["responses"].(map[string]any)
		for _, key := range sortedKeys(responses) {
			if !hasKey(s.responses, key) {
				s.responses[key] = responses[key]
			}
		}
	}
	return s
}

// Dispatch: hooks/observe is answered 204 and not recorded; every other
// message is an intercept the receiver checks.
func (s *ElicitationServer) Dispatch(message any) (answer contract.SuiteAnswer) {
	msg, _ := message.(map[string]any)
	if msg != nil && msg["method"] == "hooks/observe" {
		return contract.SuiteAnswer{}
	}
	var id any
	if msg != nil {
		id = msg["id"]
	}
	defer func() {
		if r := recover(); r != nil {
			logf("server", "internal error: %v", r)
			answer = reply(contract.RPCError(id, contract.InternalError, "internal error", nil))
		}
	}()
	_, refusal := s.receiver.Accept(message, func(a sdk.Accepted) {
		s.proc.Entries.Record(a.Entry(), "eventId")
	})
	if refusal != nil {
		logf("server", "intercept %s refused (%d): %s", sdk.EncodeString(id), refusal.Status, refusal.Msg)
		a := reply(contract.RPCError(id, contract.InvalidParams, refusal.Msg, nil))
		a.Status = refusal.Status
		return a
	}
	if key, ok := id.(string); ok && hasKey(s.responses, key) {
		return reply(sdk.Clone(s.responses[key]))
	}
	return reply(noEffect(id))
}

// Manifest is the adapter's core discovery manifest. This server answers no
// hooks/capabilities itself (a POSTed one is judged as an intercept and
// refused, docs/ELICITATION.md), so GET /capabilities answers that
// manifest's tool.before capabilities, as the other suites' servers do.
func (s *ElicitationServer) Manifest() map[string]any { return sdk.DiscoveryManifest() }

// authenticatedSource is the scenario file's authenticatedSource.
func authenticatedSource(settings *contract.SuiteServerSettings) (string, error) {
	doc, err := contract.ReadJSON(settings.ScenarioFile)
	source, _ := sdk.Path(doc, "authenticatedSource").(string)
	if err != nil || source == "" {
		return "", &contract.ConfigError{File: settings.File, Field: "scenarioFile",
			Msg: "the scenario file has no authenticatedSource string"}
	}
	return source, nil
}

// elicitationRow runs one row of the elicitation set.
func (c *Client) elicitationRow(row contract.Scenario) (map[string]any, error) {
	_, atomic := row.Raw["atomic"]
	if !atomic {
		steps, ok := row.Raw["steps"].([]any)
		if !ok {
			return nil, &rowUnsupported{"the row has neither atomic nor a steps array"}
		}
		for _, step := range steps {
			if op := sdk.Path(step, "op"); op != "upload" && op != "send" {
				return nil, &rowUnsupported{fmt.Sprintf("step op %s is not implemented by ahp-go", sdk.EncodeString(op))}
			}
		}
	}
	c.aliases = map[string]string{} // a row's aliases are its own
	if err := c.mark(row.ID, "row-start", row.ID); err != nil {
		return nil, err
	}
	if atomic {
		return c.atomic(row)
	}
	return c.wireSteps(row)
}

// exchange sends msg without the SDK's checks: the HTTP status (0 over
// stdio) and the parsed answer (malformed: not strict JSON).
func (c *Client) exchange(msg any) (int, any, error) { return c.exchangeAt("", msg) }

// exchangeAt is exchange over HTTP to route of the endpoint's base ("": the
// endpoint itself); over stdio the next frame is the answer, whatever its id.
func (c *Client) exchangeAt(route string, msg any) (int, any, error) {
	switch ch := c.channel.(type) {
	case *contract.HTTPChannel:
		status, data, err := ch.ExchangeAt(route, msg, c.timeout())
		if err != nil {
			return 0, nil, failf("%v", err)
		}
		if len(data) == 0 {
			return status, nil, nil
		}
		v, err := sdk.Decode(data)
		if err != nil {
			return status, malformed, nil
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
			return 0, nil, failf("%v", err)
		}
		select {
		case v := <-answer:
			return 0, v, nil
		case <-time.After(c.timeout()):
			return 0, nil, failf("no answer line in time")
		}
	case contract.BrokenChannel:
		return 0, nil, failf("%s", ch.Reason)
	}
	return 0, nil, failf("no channel to the server")
}

func errorCode(answer any) any {
	code := sdk.Path(answer, "error", "code")
	if _, ok := sdk.Integer(code); ok {
		return code
	}
	return nil
}

func (c *Client) wireSteps(row contract.Scenario) (map[string]any, error) {
	outcomes := []any{}
	for i, raw := range row.Raw["steps"].([]any) {
		step, _ := raw.(map[string]any)
		var out map[string]any
		var err error
		if step["op"] == "upload" {
			out, err = c.elicitationUpload(step)
		} else {
			out, err = c.wireSend(step)
		}
		if err != nil {
			var failure *rowFailure
			if errors.As(err, &failure) {
				return nil, failf("steps[%d] (%v): %v", i, step["op"], err)
			}
			return nil, err
		}
		outcomes = append(outcomes, out)
	}
	return map[string]any{"steps": outcomes}, nil
}

func (c *Client) elicitationUpload(step map[string]any) (map[string]any, error) {
	alias, _ := step["alias"].(string)
	if alias == "" {
		return nil, failf("an upload needs a non-empty alias")
	}
	route := contract.UploadRoute{Endpoint: c.settings.Upload.Endpoint, Timeout: c.settings.Upload.Timeout}
	switch step["credential"] {
	case "upload":
		route.TokenEnv = c.settings.Upload.TokenEnv
	case "unauthorized":
		route.TokenEnv = UnauthorizedTokenEnv
	case "none":
	default:
		return nil, failf("credential must be one of upload, unauthorized, none")
	}
	encoded, _ := step["bodyBase64"].(string)
	data, err := decodeBase64(encoded)
	if err != nil {
		return nil, failf("bodyBase64 is not base64")
	}
	declared := contract.SHA256Hex(data)
	if v, has := step["sha256"]; has {
		if declared, _ = v.(string); declared == "" {
			return nil, failf("sha256 must be a non-empty string")
		}
	}
	status, receipt, err := c.upload(route, data, int64(len(data)), declared)
	if err != nil {
		return nil, err
	}
	var ref any
	if receipt != nil {
		c.aliases[alias] = receipt["ref"].(string) // a later upload under the alias rebinds it
		ref = receipt["ref"]
	}
	return map[string]any{"op": "upload", "status": status, "ref": ref}, nil
}

func (c *Client) wireSend(step map[string]any) (map[string]any, error) {
	msg, ok := sdk.Clone(step["message"]).(map[string]any)
	if !ok {
		return nil, failf("a send needs the JSON-RPC message object")
	}
	if event, ok := sdk.Path(msg, "params", "event").(map[string]any); ok {
		if items, has := event["items"]; has {
			event["items"] = sdk.RebindRefs(items, c.aliases)
		}
	}
	status, answer, err := c.exchange(msg)
	if err != nil {
		return nil, err
	}
	if answer == any(malformed) {
		answer = nil
	}
	var accepted bool
	if c.stdio {
		m, _ := answer.(map[string]any)
		accepted = hasKey(m, "result") && !hasKey(m, "error")
	} else {
		accepted = status == 200
	}
	out := map[string]any{"op": "send", "outcome": "rejected", "status": nil, "error": errorCode(answer), "response": nil}
	if !c.stdio {
		out["status"] = status
	}
	if accepted {
		out["outcome"], out["response"] = "accepted", answer
	}
	return out, nil
}

// replyOf is the reply to an intercept the host sends: a 200's body, or a
// refusal's JSON-RPC error (which the core rules reject); any other answer
// over HTTP fails the row.
func (c *Client) replyOf(msg map[string]any) (any, error) {
	status, answer, err := c.exchange(msg)
	if err != nil {
		return nil, err
	}
	if c.stdio || status == 200 {
		return answer, nil
	}
	if m, ok := answer.(map[string]any); ok && hasKey(m, "error") {
		logf("client", "%v: refused with HTTP %d", msg["id"], status)
		return answer, nil
	}
	return nil, failf("%v: HTTP status %d", msg["id"], status)
}

func (c *Client) atomic(row contract.Scenario) (map[string]any, error) {
	atomic, ok := row.Raw["atomic"].(map[string]any)
	if !ok {
		return nil, failf("atomic must be an object")
	}
	user, ok1 := atomic["userResult"].(map[string]any)
	capabilities, ok2 := atomic["resultCapabilities"].(map[string]any)
	if !ok1 || !ok2 {
		return nil, failf("atomic needs a userResult and resultCapabilities object")
	}
	raw, ok := atomic["request"].(map[string]any)
	if !ok {
		return nil, failf("atomic.request must be an intercept request")
	}
	request, err := c.checked(sdk.Clone(raw).(map[string]any), sdk.InterceptRequest)
	if err != nil {
		return nil, err
	}
	event := sdk.Object(sdk.Path(request, "params", "event"))
	if event["type"] != sdk.ElicitationRequest {
		return nil, &rowUnsupported{"atomic.request is not a " + sdk.ElicitationRequest + " intercept"}
	}
	actual := map[string]any{"request": sdk.Rejected, "result": "not-sent", "published": nil, "provenance": nil}
	reply, err := c.replyOf(request)
	if err != nil {
		return nil, err
	}
	verdict, returned, why := sdk.JudgeRequest(c.schemas, c.forms, request, reply, reply == any(malformed))
	actual["request"] = verdict
	if why != "" {
		logf("client", "%s: request reply rejected: %s", row.ID, why)
	}
	if verdict != sdk.Allowed {
		return actual, nil // rejected (fail closed) or denied: the user is not asked
	}
	result, provenance := returned, "hook"
	if result == nil {
		result, provenance = sdk.Clone(user).(map[string]any), "user"
	}
	msg, err := c.checked(sdk.ResultRequest(row.ID, event, result, capabilities), sdk.InterceptRequest)
	if err != nil {
		return nil, err
	}
	reply, err = c.replyOf(msg)
	if err != nil {
		return nil, err
	}
	schema := sdk.RequestedSchema(sdk.BodyOf(event, "request"))
	published, edited, why := sdk.JudgeResult(c.schemas, c.forms, msg, result, reply, reply == any(malformed), schema)
	if published == nil {
		logf("client", "%s: result reply rejected: %s", row.ID, why)
		actual["result"] = sdk.Rejected
		return actual, nil
	}
	if edited {
		provenance = "hook"
	}
	actual["result"], actual["published"], actual["provenance"] = "accepted", published, provenance
	return actual, nil
}
