// Package stepstest is an in-process suite server (its AHP, control and
// upload listeners) with a step client connected to it over HTTP, and the
// helpers the engine's and the suites' tests share. Only tests import it.
package stepstest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/contract/steps"
	"ahp-interop/adapters/go/sdk"
)

// UploadToken is the one credential the rig's upload listener accepts; the
// client's upload route reads it from $AHP_TEST_UPLOAD_TOKEN.
const UploadToken = "test-upload-token-0123456789"

// Schemas are the canonical schemas of this checkout: schemas/draft of the
// nearest directory above the test's that has one.
func Schemas(t *testing.T) *sdk.Schemas {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		draft := filepath.Join(dir, "schemas", "draft")
		if info, err := os.Stat(draft); err == nil && info.IsDir() {
			s, err := sdk.LoadSchemas(os.DirFS(draft))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no schemas/draft above the test's directory")
		}
		dir = parent
	}
}

// Decode parses a JSON text written in the test (strict, numbers kept).
func Decode(t *testing.T, text string) map[string]any {
	t.Helper()
	v, err := sdk.Decode([]byte(text))
	if err != nil {
		t.Fatalf("test JSON: %v", err)
	}
	return v.(map[string]any)
}

// List parses a JSON array written in the test.
func List(t *testing.T, text string) []any {
	t.Helper()
	v, err := sdk.Decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v.([]any)
}

// ExpectJSON: got equals the JSON text want (typed deep equality).
func ExpectJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	w, err := sdk.Decode([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	if !sdk.Equal(got, w) {
		t.Errorf("%s: got %s, want %s", what, sdk.EncodeString(got), want)
	}
}

// Rig is a suite server in process and a client of it over HTTP.
type Rig struct {
	Client          *steps.Client
	Rows            steps.Rows
	Proc            *contract.SuiteServer
	URL, ControlURL string // the AHP and control listeners'
	closers         []func()
}

// New starts server's AHP side (for rows, no auth) with its control and
// upload listeners, and a client run of rows with rows (the config's
// backends.unreachable refusing connections).
func New(t *testing.T, server steps.ServerFactory, rows steps.Rows, raw ...map[string]any) *Rig {
	t.Helper()
	s := Schemas(t)
	var scenarios []contract.Scenario
	for _, row := range raw {
		scenarios = append(scenarios, contract.Scenario{ID: row["id"].(string), Raw: row})
	}
	proc := contract.NewSuiteServer(&contract.SuiteServerSettings{ServerSettings: &contract.ServerSettings{Scenarios: scenarios},
		UploadToken: UploadToken})
	backend, err := server(s, proc)
	if err != nil {
		t.Fatal(err)
	}
	proc.Backend = backend
	ahp := httptest.NewServer(contract.NewSuiteHandler(proc, nil))
	control := httptest.NewServer(proc.NewControl())
	upload := httptest.NewServer(&contract.UploadHandler{Token: UploadToken, Store: proc.Store, Entries: proc.Entries})
	t.Setenv("AHP_TEST_UPLOAD_TOKEN", UploadToken)
	settings := &contract.SuiteClientSettings{
		ClientSettings: &contract.ClientSettings{Transport: "http", TimeoutMs: 5000, Scenarios: scenarios,
			Endpoint: ahp.URL + "/intercept", Auth: &contract.ClientAuth{Mode: "none", Profile: "strict"}},
		ControlEndpoint: control.URL,
		Upload: contract.UploadRoute{Endpoint: upload.URL + contract.UploadPath, TokenEnv: "AHP_TEST_UPLOAD_TOKEN",
			Timeout: 5 * time.Second},
		Backends: map[string]contract.BackendSettings{
			contract.Unreachable: {Endpoint: "http://127.0.0.1:1/intercept"}},
	}
	c, err := steps.Open(settings, s)
	if err != nil {
		t.Fatal(err)
	}
	return &Rig{Client: c, Rows: rows, Proc: proc, URL: ahp.URL, ControlURL: control.URL,
		closers: []func(){c.Close, proc.Shutdown, ahp.Close, control.Close, upload.Close}}
}

// Close stops the client, then the server and its listeners.
func (r *Rig) Close() {
	for _, f := range r.closers {
		f()
	}
}

// Result is row's result as the report carries it.
func (r *Rig) Result(row map[string]any) map[string]any {
	return r.Client.Row(r.Rows, contract.Scenario{ID: row["id"].(string), Raw: row}).(map[string]any)
}

// Run is row's actual; the test fails unless the row completed.
func (r *Rig) Run(t *testing.T, row map[string]any) map[string]any {
	t.Helper()
	result := r.Result(row)
	if result["status"] != "completed" {
		t.Fatalf("%s: %s", row["id"], sdk.EncodeString(result))
	}
	return result["actual"].(map[string]any)
}

// Entries are the receipt log's entries so far.
func (r *Rig) Entries() []any { return r.Proc.Entries.Snapshot()["entries"].([]any) }

// Kinds are the kinds of the entries naming id (as id or eventId), in order, comma-separated.
func (r *Rig) Kinds(id string) string {
	var kinds []string
	for _, e := range r.Entries() {
		if sdk.Path(e, "id") == id || sdk.Path(e, "eventId") == id {
			kinds = append(kinds, sdk.Path(e, "kind").(string))
		}
	}
	return strings.Join(kinds, ",")
}

// Post posts body to base+path: the status and the answer's text.
func Post(t *testing.T, base, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// GetCapabilities checks GET /capabilities of server's AHP side behind a
// bearer token: 401 without it; with it 200 application/json, never
// recorded. It returns that answer and what a POSTed hooks/capabilities
// answers.
func GetCapabilities(t *testing.T, server steps.ServerFactory) (got, posted any) {
	t.Helper()
	proc := contract.NewSuiteServer(&contract.SuiteServerSettings{ServerSettings: &contract.ServerSettings{},
		UploadToken: UploadToken})
	backend, err := server(Schemas(t), proc)
	if err != nil {
		t.Fatal(err)
	}
	proc.Backend = backend
	ahp := httptest.NewServer(contract.NewSuiteHandler(proc, &sdk.ServerPolicy{Mode: "bearer", Token: "tok"}))
	defer func() { proc.Shutdown(); ahp.Close() }()
	exchange := func(method, body string, auth bool) (int, string, any) {
		req, _ := http.NewRequest(method, ahp.URL+"/capabilities", strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer tok")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		v, _ := sdk.Decode(data)
		return resp.StatusCode, resp.Header.Get("Content-Type"), v
	}
	if status, _, _ := exchange(http.MethodGet, "", false); status != 401 {
		t.Errorf("unauthenticated: %d", status)
	}
	status, kind, got := exchange(http.MethodGet, "", true)
	if status != 200 || kind != "application/json" {
		t.Fatalf("GET: %d %q", status, kind)
	}
	if n := len(proc.Entries.Snapshot()["entries"].([]any)); n != 0 {
		t.Errorf("GET /capabilities was recorded: %d entries", n)
	}
	discovery := `{"jsonrpc": "2.0", "id": 3, "method": "hooks/capabilities", "params": {"protocolVersion": "draft"}}`
	_, _, posted = exchange(http.MethodPost, discovery, true)
	return got, posted
}

// ToolBefore is the capabilities of manifest's tool.before intercept entry (nil: none).
func ToolBefore(manifest any) any {
	var want any
	events, _ := sdk.Path(manifest, "events").([]any)
	for _, e := range events {
		intercept := false
		modes, _ := sdk.Path(e, "modes").([]any)
		for _, mode := range modes {
			intercept = intercept || mode == "intercept"
		}
		if sdk.Equal(sdk.Path(e, "event"), "tool.before") && intercept {
			want = sdk.Path(e, "capabilities")
		}
	}
	return want
}
