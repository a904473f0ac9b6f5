// Package lifecycle is the lifecycle suite (docs/LIFECYCLE.md): the step
// rows (steps, chains, uploads, scripted faults [ext], receiver probes) as
// the step engine's client runs them, against the step server. The
// isolation suite runs it unchanged (docs/ISOLATION.md).
package lifecycle

import (
	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps"
	"ahp-interop/adapters/go/sdk"
)

// Name is the config's suite.
const Name = "lifecycle"

// Suite registers the lifecycle suite: both lifecycle commands, on the step
// engine. Its configs carry upload blocks and contentSources.
var Suite = steps.Suite{
	Spec: contract.SuiteSpec{Name: Name, Uploads: true, ContentSources: true},
	// the engine's and the elicitation definitions (a schemaDir without them exits 2)
	ClientSchemas: append(steps.ClientSchemas(), sdk.ElicitationDefinitions()...),
	ServerSchemas: steps.ServerSchemas(),
	Server:        server,
	Rows:          func() steps.Rows { return rows{} },
}.Registration()

// server is the step server of the config's rows.
func server(schemas *sdk.Schemas, proc *contract.SuiteServer) (contract.SuiteDispatcher, error) {
	return steps.NewServer(schemas, proc, proc.Settings.Scenarios), nil
}

// rows run every row as a step row.
type rows struct{}

func (rows) Start(*steps.Client) {}

func (rows) Row(c *steps.Client, row contract.Scenario) (map[string]any, error) {
	return c.RunSteps(row)
}

// Report carries the content sources uploaded, in order.
func (rows) Report(c *steps.Client, report map[string]any) {
	report["contentUploads"] = c.ContentUploads()
}
