// Package elicitation is the elicitation suite (docs/ELICITATION.md): a
// receiver that validates complete elicitation events, and a host that
// applies a backend's effects at both elicitation boundaries atomically.
// The client never reads a row's expected or responses.
package elicitation

import (
	"encoding/base64"
	"errors"
	"fmt"
	"sort"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps"
	"ahp-interop/adapters/go/sdk"
)

// Name is the config's suite.
const Name = "elicitation"

// Suite registers the elicitation suite: both lifecycle commands, on the
// step engine. Its configs carry upload blocks; contentSources may be absent.
var Suite = steps.Suite{
	Spec:          contract.SuiteSpec{Name: Name, Uploads: true},
	ClientSchemas: append(steps.ClientSchemas(), sdk.ElicitationDefinitions()...),
	ServerSchemas: append(steps.ServerSchemas(), sdk.ElicitationDefinitions()...),
	Server: func(schemas *sdk.Schemas, proc *contract.SuiteServer) (contract.SuiteDispatcher, error) {
		source, err := authenticatedSource(proc.Settings)
		if err != nil {
			return nil, err
		}
		return NewServer(schemas, proc, proc.Settings.Scenarios, source), nil
	},
	Rows: func() steps.Rows { return &rows{forms: sdk.NewFormSchemas()} },
}.Registration()

// UnauthorizedTokenEnv holds an upload token the receiver does not accept.
const UnauthorizedTokenEnv = "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN"

func noEffect(id any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"protocolVersion": "draft", "effects": []any{}}}
}

// Server is the AHP side of an elicitation server.
type Server struct {
	proc      *contract.SuiteServer
	receiver  *sdk.Receiver
	responses map[string]any // request id -> the scripted reply (the first row naming it wins)
}

// NewServer indexes the rows' scripted responses.
func NewServer(schemas *sdk.Schemas, proc *contract.SuiteServer, rows []contract.Scenario,
	authenticatedSource string) *Server {
	s := &Server{proc: proc, responses: map[string]any{},
		receiver: sdk.NewReceiver(schemas, proc.Store.Has, authenticatedSource)}
	for _, row := range rows {
		responses, _ := row.Raw["responses"].(map[string]any)
		keys := make([]string, 0, len(responses))
		for key := range responses {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			if _, seen := s.responses[key]; !seen {
				s.responses[key] = responses[key]
			}
		}
	}
	return s
}

// Dispatch: hooks/observe is answered 204 and not recorded; every other
// message is an intercept the receiver checks.
func (s *Server) Dispatch(message any) (answer contract.SuiteAnswer) {
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
			steps.Logf("server", "internal error: %v", r)
			answer = steps.Reply(contract.RPCError(id, contract.InternalError, "internal error", nil))
		}
	}()
	_, refusal := s.receiver.Accept(message, func(a sdk.Accepted) {
		s.proc.Entries.Record(a.Entry(), "eventId")
	})
	if refusal != nil {
		steps.Logf("server", "intercept %s refused (%d): %s", sdk.EncodeString(id), refusal.Status, refusal.Msg)
		a := steps.Reply(contract.RPCError(id, contract.InvalidParams, refusal.Msg, nil))
		a.Status = refusal.Status
		return a
	}
	if key, ok := id.(string); ok && hasKey(s.responses, key) {
		return steps.Reply(sdk.Clone(s.responses[key]))
	}
	return steps.Reply(noEffect(id))
}

// Manifest is the adapter's core discovery manifest. This server answers no
// hooks/capabilities itself (a POSTed one is judged as an intercept and
// refused, docs/ELICITATION.md), so GET /capabilities answers that
// manifest's tool.before capabilities, as the other suites' servers do.
func (s *Server) Manifest() map[string]any { return sdk.DiscoveryManifest() }

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

// rows are one client run's rows; the requested form schemas compiled are the run's.
type rows struct {
	forms *sdk.FormSchemas
}

func (r *rows) Start(*steps.Client) {}

// Report carries the content uploads.
func (r *rows) Report(c *steps.Client, report map[string]any) {
	report["contentUploads"] = c.ContentUploads()
}

// Row runs one row of the elicitation set.
func (r *rows) Row(c *steps.Client, row contract.Scenario) (map[string]any, error) {
	_, atomic := row.Raw["atomic"]
	if !atomic {
		list, ok := row.Raw["steps"].([]any)
		if !ok {
			return nil, steps.Unsupported("the row has neither atomic nor a steps array")
		}
		for _, step := range list {
			if op := sdk.Path(step, "op"); op != "upload" && op != "send" {
				return nil, steps.Unsupported(fmt.Sprintf("step op %s is not implemented by ahp-go", sdk.EncodeString(op)))
			}
		}
	}
	c.ResetAliases() // a row's aliases are its own
	if err := c.Mark(row.ID, "row-start", row.ID); err != nil {
		return nil, err
	}
	if atomic {
		return r.atomic(c, row)
	}
	return wireSteps(c, row)
}

func errorCode(answer any) any {
	code := sdk.Path(answer, "error", "code")
	if _, ok := sdk.Integer(code); ok {
		return code
	}
	return nil
}

func wireSteps(c *steps.Client, row contract.Scenario) (map[string]any, error) {
	outcomes := []any{}
	for i, raw := range row.Raw["steps"].([]any) {
		step, _ := raw.(map[string]any)
		var out map[string]any
		var err error
		if step["op"] == "upload" {
			out, err = upload(c, step)
		} else {
			out, err = wireSend(c, step)
		}
		if err != nil {
			var failure *steps.RowFailure
			if errors.As(err, &failure) {
				return nil, steps.Failf("steps[%d] (%v): %v", i, step["op"], err)
			}
			return nil, err
		}
		outcomes = append(outcomes, out)
	}
	return map[string]any{"steps": outcomes}, nil
}

func upload(c *steps.Client, step map[string]any) (map[string]any, error) {
	alias, _ := step["alias"].(string)
	if alias == "" {
		return nil, steps.Failf("an upload needs a non-empty alias")
	}
	config := c.Settings().Upload
	route := contract.UploadRoute{Endpoint: config.Endpoint, Timeout: config.Timeout}
	switch step["credential"] {
	case "upload":
		route.TokenEnv = config.TokenEnv
	case "unauthorized":
		route.TokenEnv = UnauthorizedTokenEnv
	case "none":
	default:
		return nil, steps.Failf("credential must be one of upload, unauthorized, none")
	}
	encoded, _ := step["bodyBase64"].(string)
	data, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, steps.Failf("bodyBase64 is not base64")
	}
	declared := contract.SHA256Hex(data)
	if v, has := step["sha256"]; has {
		if declared, _ = v.(string); declared == "" {
			return nil, steps.Failf("sha256 must be a non-empty string")
		}
	}
	status, receipt, err := c.Upload(route, data, int64(len(data)), declared)
	if err != nil {
		return nil, err
	}
	var ref any
	if receipt != nil {
		c.Alias(alias, receipt["ref"].(string)) // a later upload under the alias rebinds it
		ref = receipt["ref"]
	}
	return map[string]any{"op": "upload", "status": status, "ref": ref}, nil
}

func wireSend(c *steps.Client, step map[string]any) (map[string]any, error) {
	msg, ok := sdk.Clone(step["message"]).(map[string]any)
	if !ok {
		return nil, steps.Failf("a send needs the JSON-RPC message object")
	}
	if event, ok := sdk.Path(msg, "params", "event").(map[string]any); ok {
		if items, has := event["items"]; has {
			event["items"] = c.RebindRefs(items)
		}
	}
	status, answer, err := c.Exchange(msg)
	if err != nil {
		return nil, err
	}
	if answer == any(steps.Malformed) {
		answer = nil
	}
	var accepted bool
	if c.Stdio() {
		m, _ := answer.(map[string]any)
		accepted = hasKey(m, "result") && !hasKey(m, "error")
	} else {
		accepted = status == 200
	}
	out := map[string]any{"op": "send", "outcome": "rejected", "status": nil, "error": errorCode(answer), "response": nil}
	if !c.Stdio() {
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
func replyOf(c *steps.Client, msg map[string]any) (any, error) {
	status, answer, err := c.Exchange(msg)
	if err != nil {
		return nil, err
	}
	if c.Stdio() || status == 200 {
		return answer, nil
	}
	if m, ok := answer.(map[string]any); ok && hasKey(m, "error") {
		steps.Logf("client", "%v: refused with HTTP %d", msg["id"], status)
		return answer, nil
	}
	return nil, steps.Failf("%v: HTTP status %d", msg["id"], status)
}

func (r *rows) atomic(c *steps.Client, row contract.Scenario) (map[string]any, error) {
	atomic, ok := row.Raw["atomic"].(map[string]any)
	if !ok {
		return nil, steps.Failf("atomic must be an object")
	}
	user, ok1 := atomic["userResult"].(map[string]any)
	capabilities, ok2 := atomic["resultCapabilities"].(map[string]any)
	if !ok1 || !ok2 {
		return nil, steps.Failf("atomic needs a userResult and resultCapabilities object")
	}
	raw, ok := atomic["request"].(map[string]any)
	if !ok {
		return nil, steps.Failf("atomic.request must be an intercept request")
	}
	request, err := c.Checked(sdk.Clone(raw).(map[string]any), sdk.InterceptRequest)
	if err != nil {
		return nil, err
	}
	event := sdk.Object(sdk.Path(request, "params", "event"))
	if event["type"] != sdk.ElicitationRequest {
		return nil, steps.Unsupported("atomic.request is not a " + sdk.ElicitationRequest + " intercept")
	}
	actual := map[string]any{"request": sdk.Rejected, "result": "not-sent", "published": nil, "provenance": nil}
	reply, err := replyOf(c, request)
	if err != nil {
		return nil, err
	}
	verdict, returned, why := sdk.JudgeRequest(c.Schemas(), r.forms, request, reply, reply == any(steps.Malformed))
	actual["request"] = verdict
	if why != "" {
		steps.Logf("client", "%s: request reply rejected: %s", row.ID, why)
	}
	if verdict != sdk.Allowed {
		return actual, nil // rejected (fail closed) or denied: the user is not asked
	}
	result, provenance := returned, "hook"
	if result == nil {
		result, provenance = sdk.Clone(user).(map[string]any), "user"
	}
	msg, err := c.Checked(sdk.ResultRequest(row.ID, event, result, capabilities), sdk.InterceptRequest)
	if err != nil {
		return nil, err
	}
	reply, err = replyOf(c, msg)
	if err != nil {
		return nil, err
	}
	schema := sdk.RequestedSchema(sdk.BodyOf(event, "request"))
	published, edited, why := sdk.JudgeResult(c.Schemas(), r.forms, msg, result, reply, reply == any(steps.Malformed), schema)
	if published == nil {
		steps.Logf("client", "%s: result reply rejected: %s", row.ID, why)
		actual["result"] = sdk.Rejected
		return actual, nil
	}
	if edited {
		provenance = "hook"
	}
	actual["result"], actual["published"], actual["provenance"] = "accepted", published, provenance
	return actual, nil
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }
