package lifecycle

import (
	"fmt"
	"os"
	"time"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// ReadySeconds bounds the wait for a spawned stdio server's readiness file.
const ReadySeconds = 30

// ServerRole runs lifecycle-server: a config whose suite is not one this
// adapter implements exits 2 naming the suite field.
func ServerRole(configPath string) (int, error) {
	settings, err := contract.LoadSuiteServer(configPath)
	if err != nil {
		return 2, err
	}
	return Serve(settings)
}

func writeReport(path, language string, results []any, extra map[string]any) error {
	report := map[string]any{"language": language, "results": results}
	for k, v := range extra {
		report[k] = v
	}
	return contract.WriteJSONAtomic(path, report)
}

// ClientRole runs lifecycle-client: for a suite this adapter does not
// implement, every row is reported unsupported naming it.
func ClientRole(configPath string) (int, error) {
	settings, err := contract.LoadSuiteClient(configPath)
	if err != nil {
		return 2, err
	}
	if !contract.Implements(settings.Suite) {
		why := fmt.Sprintf("suite %s is not implemented by ahp-go", sdk.EncodeString(settings.Suite))
		results := []any{}
		for _, row := range settings.Scenarios {
			results = append(results, unsupportedRow(row.ID, why))
		}
		extra := map[string]any{"contentUploads": []any{}}
		if settings.Transport == "stdio" {
			if c, err := open(settings, nil); err == nil {
				if c.control != nil {
					if receipts, err := c.control.Call("GET", "/receipts", nil); err == nil {
						extra["receipts"] = receipts
					}
				}
				c.close()
			}
		}
		if err := writeReport(settings.ReportFile, settings.Language, results, extra); err != nil {
			return 1, err
		}
		return 0, nil
	}
	schemas, err := contract.LoadSchemas(settings.File, settings.SchemaDir)
	if err != nil {
		return 2, err
	}
	names := append([]string{sdk.InterceptRequest, sdk.InterceptResponse, ObserveNotification, UploadReceipt},
		append(sdk.Definitions(), sdk.ElicitationDefinitions()...)...)
	catalogue := settings.Suite == contract.SuiteCatalogue
	if catalogue {
		names = CatalogueSchemas
	}
	for _, name := range names {
		if _, err := schemas.Compile(name); err != nil {
			return 2, &contract.ConfigError{File: settings.File, Field: "schemaDir", Msg: err.Error()}
		}
	}
	c, err := open(settings, schemas)
	if err != nil {
		return 2, err
	}
	results := []any{}
	extra := map[string]any{}
	func() {
		defer c.close()
		if catalogue {
			c.discover()
			extra["discovery"] = c.catalogue.discovery
		}
		for _, row := range settings.Scenarios {
			results = append(results, c.row(row))
		}
		if !catalogue {
			extra["contentUploads"] = append([]any{}, c.contentUploads...)
		}
		if c.control != nil {
			if receipts, err := c.control.Call("GET", "/receipts", nil); err != nil {
				logf("client", "GET /receipts: %v", err)
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

// open connects to the run's server: over HTTP the endpoints the config
// gives; over stdio the server is spawned here, its pid written to
// childPidFile and its readiness awaited.
func open(settings *contract.SuiteClientSettings, schemas *sdk.Schemas) (*Client, error) {
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
		contentUploads: []any{}, uploadURL: settings.Upload.Endpoint, forms: sdk.NewFormSchemas()}
	for _, s := range settings.ContentSources {
		c.sources[s.Ref] = s
	}
	return c
}

func (c *Client) close() {
	if c.control != nil {
		c.control.Close()
	}
	for _, ch := range c.backends {
		ch.Close()
	}
	c.channel.Close()
}
