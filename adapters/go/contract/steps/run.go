// Package steps is the step engine: the process model every suite the
// lifecycle commands run shares (docs/CONTRACT.md, "One command pair for
// every suite past core"), and the machinery their rows are made of.
//
// The client side: one Client per run (the server's channel, spawned over
// stdio; the control client; upload routes, aliases and content uploads;
// marks, waits, row failures), the step rows (steps and chains,
// docs/LIFECYCLE.md) and chains on any request; a suite's Rows decide what
// each of its rows is. The server side: the step server (held replies,
// response sequences, scripted faults, observations) and the scripted
// faults other servers reuse; the process around any suite's dispatcher is
// contract.SuiteServer. A Suite states its config blocks, its schemas, its
// server and its rows; Registration makes it the roles of both lifecycle
// commands. This package knows no suite: each suite package (suites/*)
// declares its own Suite.
package steps

import (
	"fmt"
	"os"
	"time"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// ReadySeconds bounds the wait for a spawned stdio server's readiness file.
const ReadySeconds = 30

// ClientSchemas are the canonical schemas the engine's client checks what
// it sends and evaluates replies against; a step suite's client schemas
// start with them.
func ClientSchemas() []string {
	return append([]string{sdk.InterceptRequest, sdk.InterceptResponse, ObserveNotification, UploadReceipt},
		sdk.Definitions()...)
}

// ServerSchemas are the canonical schemas the step server checks against;
// every suite's server schemas start with them.
func ServerSchemas() []string { return []string{sdk.InterceptRequest, ObserveNotification} }

// ServerFactory makes a suite server's AHP side for proc (its schemas
// compiled); it may set proc's ObservedKinds and ControlCalls. An error
// (a ConfigError) exits 2.
type ServerFactory func(schemas *sdk.Schemas, proc *contract.SuiteServer) (contract.SuiteDispatcher, error)

// Rows are a suite's client rows for one run.
type Rows interface {
	// Start runs once, before the first row (Client.Problem says whether
	// anything can run).
	Start(c *Client)
	// Row runs one row: its actual, else a RowUnsupported, a RowFailure or
	// another error (Client.Row reports each).
	Row(c *Client, row contract.Scenario) (map[string]any, error)
	// Report adds the suite's fields to the report, after the last row.
	Report(c *Client, report map[string]any)
}

// Suite is one suite the lifecycle commands run, as the engine runs it.
type Suite struct {
	// Spec is its name (the config's suite) and the blocks its configs carry.
	Spec contract.SuiteSpec
	// ClientSchemas and ServerSchemas are compiled at each role's start, in
	// order (the first a schemaDir lacks exits 2 naming schemaDir).
	ClientSchemas, ServerSchemas []string
	// Server makes the server's AHP side; the process around it (listeners,
	// control, uploads, readiness) is contract.SuiteServer's.
	Server ServerFactory
	// Rows makes the client's rows for one run; the process around them
	// (connection, control, report) is ClientRole's.
	Rows func() Rows
}

// Registration is s as a suite's registration: the roles of both
// lifecycle commands.
func (s Suite) Registration() contract.Suite {
	return contract.Suite{Name: s.Spec.Name, Roles: map[string]contract.Role{
		contract.CommandLifecycleClient: func(configPath string) (int, error) { return ClientRole(configPath, s) },
		contract.CommandLifecycleServer: func(configPath string) (int, error) { return ServerRole(configPath, s) },
	}}
}

// Unimplemented are the roles of both lifecycle commands for a config
// whose suite no registered suite is (implemented names the registered
// ones): the client reports every row unsupported naming it, the server
// exits 2 naming the suite field.
var Unimplemented = map[string]func(configPath string, implemented []string) (int, error){
	contract.CommandLifecycleClient: func(configPath string, _ []string) (int, error) {
		return OtherSuiteClient(configPath)
	},
	contract.CommandLifecycleServer: func(configPath string, implemented []string) (int, error) {
		_, err := contract.RequireSuite(configPath, implemented...)
		return 2, err
	},
}

func compile(schemas *sdk.Schemas, file string, names []string) error {
	for _, name := range names {
		if _, err := schemas.Compile(name); err != nil {
			return &contract.ConfigError{File: file, Field: "schemaDir", Msg: err.Error()}
		}
	}
	return nil
}

// ServerRole runs lifecycle-server for suite s (the config's suite).
func ServerRole(configPath string, s Suite) (int, error) {
	settings, err := contract.LoadSuiteServer(configPath, s.Spec)
	if err != nil {
		return 2, err
	}
	schemas, err := contract.LoadSchemas(settings.File, settings.SchemaDir)
	if err != nil {
		return 2, err
	}
	if err := compile(schemas, settings.File, s.ServerSchemas); err != nil {
		return 2, err
	}
	proc := contract.NewSuiteServer(settings)
	if proc.Backend, err = s.Server(schemas, proc); err != nil {
		return 2, err
	}
	return proc.Run()
}

func writeReport(path, language string, results []any, extra map[string]any) error {
	report := map[string]any{"language": language, "results": results}
	for k, v := range extra {
		report[k] = v
	}
	return contract.WriteJSONAtomic(path, report)
}

// OtherSuiteClient runs lifecycle-client for a suite this adapter does not
// implement: every row is reported unsupported naming it (over stdio with
// the spawned server's receipts).
func OtherSuiteClient(configPath string) (int, error) {
	settings, err := contract.LoadOtherSuiteClient(configPath)
	if err != nil {
		return 2, err
	}
	why := fmt.Sprintf("suite %s is not implemented by ahp-go", sdk.EncodeString(settings.Suite))
	results := []any{}
	for _, row := range settings.Scenarios {
		results = append(results, unsupportedRow(row.ID, why))
	}
	extra := map[string]any{"contentUploads": []any{}}
	if settings.Transport == "stdio" {
		if c, err := Open(settings, nil); err == nil {
			if c.control != nil {
				if receipts, err := c.control.Call("GET", "/receipts", nil); err == nil {
					extra["receipts"] = receipts
				}
			}
			c.Close()
		}
	}
	if err := writeReport(settings.ReportFile, settings.Language, results, extra); err != nil {
		return 1, err
	}
	return 0, nil
}

// ClientRole runs lifecycle-client for suite s (the config's suite): the
// rows in order against one server, then the report with the server's
// receipts.
func ClientRole(configPath string, s Suite) (int, error) {
	settings, err := contract.LoadSuiteClient(configPath, s.Spec)
	if err != nil {
		return 2, err
	}
	schemas, err := contract.LoadSchemas(settings.File, settings.SchemaDir)
	if err != nil {
		return 2, err
	}
	if err := compile(schemas, settings.File, s.ClientSchemas); err != nil {
		return 2, err
	}
	c, err := Open(settings, schemas)
	if err != nil {
		return 2, err
	}
	rows := s.Rows()
	results := []any{}
	extra := map[string]any{}
	func() {
		defer c.Close()
		rows.Start(c)
		for _, row := range settings.Scenarios {
			results = append(results, c.Row(rows, row))
		}
		rows.Report(c, extra)
		if c.control != nil {
			if receipts, err := c.control.Call("GET", "/receipts", nil); err != nil {
				Logf("client", "GET /receipts: %v", err)
			} else {
				extra["receipts"] = receipts
			}
		}
	}()
	if err := writeReport(settings.ReportFile, settings.Language, results, extra); err != nil {
		return 1, err
	}
	return 0, nil
}

// Open connects to the run's server: over HTTP the endpoints the config
// gives; over stdio the server is spawned here, its pid written to
// childPidFile and its readiness awaited. What keeps rows from running is
// the client's Problem, not an error.
func Open(settings *contract.SuiteClientSettings, schemas *sdk.Schemas) (*Client, error) {
	c := newClient(settings, schemas)
	if settings.Transport == "http" {
		c.control = contract.NewControlClient(settings.ControlEndpoint)
		target, err := contract.ClientHTTPTarget(settings.ClientSettings, settings.Endpoint)
		if err != nil {
			return nil, err
		}
		c.target = target
		if target.Broken != "" {
			c.channel = contract.BrokenChannel{Reason: target.Broken}
		} else {
			c.channel = contract.NewHTTPChannel(settings.Endpoint, target.Token, target.TLS)
		}
		return c, nil
	}
	c.stdio = true
	serverConfig, err := contract.ReadJSON(settings.ServerConfig)
	readyFile, _ := sdk.Path(serverConfig, "readinessFile").(string)
	if err != nil || readyFile == "" {
		c.problem = "serverConfig: the server config has no readinessFile"
		c.channel = contract.BrokenChannel{Reason: c.problem}
		return c, nil
	}
	argv := append(append([]string{}, settings.ServerCommand...), "--config", settings.ServerConfig)
	sc, err := contract.StartStdioChannel(argv, settings.ServerCwd)
	if err != nil {
		c.problem = fmt.Sprintf("cannot start the stdio server: %v", err)
		c.channel = contract.BrokenChannel{Reason: c.problem}
		return c, nil
	}
	sc.Unsolicited = c.strays.frame
	c.channel = sc
	if err := contract.WriteJSONAtomic(settings.ChildPidFile, map[string]any{"pid": sc.Pid()}); err != nil {
		c.problem = fmt.Sprintf("childPidFile: %v", err)
		return c, nil
	}
	var ready any
	deadline := time.Now().Add(ReadySeconds * time.Second)
	for time.Now().Before(deadline) {
		if _, statErr := os.Stat(readyFile); statErr == nil {
			if v, err := contract.ReadJSON(readyFile); err == nil {
				if _, ok := sdk.Path(v, "controlEndpoint").(string); ok {
					ready = v
					break
				}
			}
		}
		if sc.Exited() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	control, _ := sdk.Path(ready, "controlEndpoint").(string)
	if control == "" {
		c.problem = "the stdio server wrote no readiness file in time (or exited)"
		return c, nil
	}
	if up, ok := sdk.Path(ready, "uploadEndpoint").(string); ok && c.uploadURL == "" {
		c.uploadURL = up
	}
	c.control = contract.NewControlClient(control)
	return c, nil
}

func newClient(settings *contract.SuiteClientSettings, schemas *sdk.Schemas) *Client {
	c := &Client{settings: settings, schemas: schemas, strays: &strays{expected: map[string]chan struct{}{}},
		backends: map[string]contract.Channel{}, aliases: map[string]string{},
		sources: map[string]contract.ContentSource{}, sends: map[string]int{}, observed: map[string]int{},
		contentUploads: []any{}, uploadURL: settings.Upload.Endpoint}
	for _, s := range settings.ContentSources {
		c.sources[s.Ref] = s
	}
	return c
}

// Close ends the run's connections (a spawned stdio server with its group).
func (c *Client) Close() {
	if c.control != nil {
		c.control.Close()
	}
	for _, ch := range c.backends {
		ch.Close()
	}
	c.channel.Close()
}
