// Package core is the core suite: the blind client, the in-process replay,
// and the server's hooks/intercept and hooks/capabilities.
package core

import (
	"fmt"
	"os"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// Name is the suite's name.
const Name = "core"

// Suite registers the core suite: the client, server and replay commands
// (their configs have no suite).
var Suite = contract.Suite{Name: Name, Roles: map[string]contract.Role{
	contract.CommandClient: Client,
	contract.CommandServer: Server,
	contract.CommandReplay: Replay,
}}

func logf(role, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ahp-go %s: %s\n", role, fmt.Sprintf(format, args...))
}

// Result is one row of a client report.
type Result map[string]any

func completed(id string, actual map[string]any) Result {
	return Result{"id": id, "status": "completed", "actual": actual}
}

func failed(id, why string) Result { return Result{"id": id, "status": "failed", "error": why} }

func unsupported(id, why string) Result {
	return Result{"id": id, "status": "unsupported", "error": why}
}

// Exchange sends one request and returns its parsed response.
type Exchange func(request any) (any, error)

// RunRow validates the request, sends it once, and applies the response.
func RunRow(row contract.Scenario, exchange Exchange, schemas *sdk.Schemas, role string) Result {
	request, isObject := row.Request().(map[string]any)
	if problem := schemas.Check(sdk.InterceptRequest, row.Request()); problem != "" || !isObject {
		return failed(row.ID, "request is invalid: "+problem)
	}
	response, err := exchange(request)
	eventType, _ := sdk.Path(request, "params", "event", "type").(string)
	if sdk.BoundaryFor(eventType) == nil {
		return unsupported(row.ID, fmt.Sprintf("event type %q is not implemented by ahp-go", eventType))
	}
	if err != nil {
		if _, malformed := err.(*contract.MalformedResponse); malformed {
			logf(role, "%s: response rejected: %v", row.ID, err)
			return completed(row.ID, map[string]any{"rejected": true})
		}
		return failed(row.ID, err.Error())
	}
	out := sdk.Apply(schemas, request, response, sdk.Options{})
	if out.Unsupported != "" {
		return unsupported(row.ID, out.Unsupported)
	}
	if out.Reason != "" {
		logf(role, "%s: response rejected: %s", row.ID, out.Reason)
	}
	return completed(row.ID, out.Actual)
}

func loadSchemas(file, dir string) (*sdk.Schemas, error) {
	schemas, err := contract.LoadSchemas(file, dir)
	if err != nil {
		return nil, err
	}
	for _, name := range append([]string{sdk.InterceptRequest, sdk.InterceptResponse}, sdk.Definitions()...) {
		if _, err := schemas.Compile(name); err != nil {
			return nil, &contract.ConfigError{File: file, Field: "schemaDir", Msg: err.Error()}
		}
	}
	return schemas, nil
}

func writeReport(path, language string, results []any) error {
	return contract.WriteJSONAtomic(path, map[string]any{"language": language, "results": results})
}

// Client runs the core client role.
func Client(configPath string) (int, error) {
	settings, err := contract.LoadClient(configPath)
	if err != nil {
		return 2, err
	}
	schemas, err := loadSchemas(settings.File, settings.SchemaDir)
	if err != nil {
		return 2, err
	}
	peer, err := contract.NewPeer(settings)
	if err != nil {
		return 2, err
	}
	results := []any{}
	func() {
		defer peer.Close()
		for _, row := range settings.Scenarios {
			results = append(results, map[string]any(RunRow(row, peer.Exchange, schemas, "client")))
		}
	}()
	if err := writeReport(settings.ReportFile, settings.Language, results); err != nil {
		return 1, err
	}
	return 0, nil
}

// Replay applies each row's own response to its request in process.
func Replay(configPath string) (int, error) {
	settings, err := contract.LoadReplay(configPath)
	if err != nil {
		return 2, err
	}
	schemas, err := loadSchemas(settings.File, settings.SchemaDir)
	if err != nil {
		return 2, err
	}
	results := []any{}
	for _, row := range settings.Scenarios {
		response := row.Response()
		canned := func(any) (any, error) { return response, nil }
		results = append(results, map[string]any(RunRow(row, canned, schemas, "replay")))
	}
	if err := writeReport(settings.ReportFile, settings.Language, results); err != nil {
		return 1, err
	}
	return 0, nil
}

// Server runs the core server role.
func Server(configPath string) (int, error) {
	settings, err := contract.LoadServer(configPath)
	if err != nil {
		return 2, err
	}
	schemas, err := contract.LoadSchemas(settings.File, settings.SchemaDir)
	if err != nil {
		return 2, err
	}
	if _, err := schemas.Compile(sdk.InterceptRequest); err != nil {
		return 2, &contract.ConfigError{File: settings.File, Field: "schemaDir", Msg: err.Error()}
	}
	receipts, err := contract.NewReceipts(settings.ReceiptLog)
	if err != nil {
		return 2, &contract.ConfigError{File: settings.File, Field: "receiptLog", Msg: err.Error()}
	}
	backend, err := contract.NewBackend(receipts, settings.Scenarios)
	if err != nil {
		return 2, &contract.ConfigError{File: settings.File, Field: "scenarioFile", Msg: err.Error()}
	}
	install(backend, schemas)
	return contract.RunServer(settings, backend)
}

// install puts the core server's methods on backend: hooks/intercept and
// hooks/capabilities (answered with sdk.DiscoveryResult, whose manifest is
// the one GET /capabilities answers the tool.before capabilities of).
func install(backend *contract.Backend, schemas *sdk.Schemas) {
	m := &methods{schemas: schemas, backend: backend}
	backend.Methods["hooks/intercept"] = m.intercept
	backend.Methods["hooks/capabilities"] = m.discovery
	backend.Manifest = sdk.DiscoveryManifest
}

type methods struct {
	schemas *sdk.Schemas
	backend *contract.Backend
}

func (m *methods) intercept(msg map[string]any) contract.Answer {
	id := msg["id"]
	problem := m.schemas.Check(sdk.InterceptRequest, msg)
	if problem == "" && !sdk.Equal(sdk.Path(msg, "params", "event", "id"), id) {
		problem = "request id differs from params.event.id"
	}
	if problem != "" {
		logf("server", "invalid intercept request: %s", problem)
		return contract.Reply(contract.RPCError(id, contract.InvalidParams, "invalid intercept request", nil))
	}
	row, ok := m.backend.Scenario(id)
	if !ok {
		logf("server", "no scenario for request id %s", sdk.EncodeString(id))
		return contract.Reply(contract.RPCError(id, contract.InvalidParams, "unknown scenario id", nil))
	}
	return m.backend.Scripted(row)
}

func (m *methods) discovery(msg map[string]any) contract.Answer {
	id := msg["id"]
	if v, ok := sdk.Path(msg, "params", "protocolVersion").(string); ok && v != sdk.ProtocolVersion {
		return contract.Reply(contract.RPCError(id, contract.UnsupportedVersion, "unsupported_protocol_version",
			map[string]any{"supported": []any{sdk.ProtocolVersion}}))
	}
	if m.schemas.Has(sdk.CapabilitiesRequest) {
		if problem := m.schemas.Check(sdk.CapabilitiesRequest, msg); problem != "" {
			logf("server", "invalid discovery request: %s", problem)
			return contract.Reply(contract.RPCError(id, contract.InvalidParams, "invalid capabilities request", nil))
		}
	}
	return contract.Reply(map[string]any{"jsonrpc": "2.0", "id": id, "result": sdk.DiscoveryResult()})
}
