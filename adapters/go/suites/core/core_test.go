package core

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

func schemas(t *testing.T) *sdk.Schemas {
	t.Helper()
	s, err := sdk.LoadSchemas(os.DirFS("../../../../schemas/draft"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const request = `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft",
 "event":{"id":"r1","source":"urn:test","type":"tool.before","time":"2026-04-02T10:15:00Z","session":{"id":"s"},
  "call":{"id":"c"},"tool":{"name":"read_file","kind":"other","origin":"native","input":{}},"path":"native"},
 "capabilities":{"effects":["deny"]}}}`

func row(t *testing.T, text string) contract.Scenario {
	v, err := sdk.Decode([]byte(`{"id":"r1","request":` + text + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return contract.Scenario{ID: "r1", Raw: v.(map[string]any)}
}

func TestRunRowStatuses(t *testing.T) {
	s := schemas(t)
	sent := 0
	fail := func(err error) Exchange {
		return func(any) (any, error) { sent++; return nil, err }
	}
	if r := RunRow(row(t, request), fail(&contract.MalformedResponse{Msg: "dup"}), s, "test"); r["status"] != "completed" || sdk.EncodeString(r["actual"]) != `{"rejected":true}` {
		t.Errorf("malformed response: %v", r)
	}
	if r := RunRow(row(t, request), fail(&contract.TransportError{Msg: "HTTP status 500"}), s, "test"); r["status"] != "failed" || r["error"] != "HTTP status 500" {
		t.Errorf("transport failure: %v", r)
	}
	if r := RunRow(row(t, `{"jsonrpc":"2.0"}`), fail(nil), s, "test"); r["status"] != "failed" {
		t.Errorf("invalid request: %v", r)
	}
	if sent != 2 {
		t.Errorf("an invalid request was sent, or a valid one was not: %d sends", sent)
	}
	if r := RunRow(row(t, `{"jsonrpc":"2.0","id":"r1","method":"hooks/intercept","params":{"protocolVersion":"draft",
	 "event":{"id":"r1","source":"urn:test","type":"turn.start","time":"2026-04-02T10:15:00Z","session":{"id":"s"},"turn":{"id":"t"},"trigger":"user","items":[]},
	 "capabilities":{"effects":["deny"]}}}`), fail(nil), s, "test"); r["status"] != "unsupported" {
		t.Errorf("unknown event: %v", r)
	}
}

func TestUnusableConfigIsExitTwo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(path, []byte(`{"transport":"http","transport":"stdio"}`), 0o600)
	for _, role := range []func(string) (int, error){Client, Server, Replay} {
		code, err := role(path)
		if code != 2 || !errors.As(err, new(*contract.ConfigError)) {
			t.Errorf("exit %d, %v", code, err)
		}
	}
}

// GET /capabilities of the core server: authentication first (401), then
// 200 application/json with exactly the capabilities of the tool.before
// entry of the manifest hooks/capabilities is answered with (no JSON-RPC
// envelope), never a receipt.
func TestGetCapabilitiesIsTheBareToolBeforeCapabilities(t *testing.T) {
	log := filepath.Join(t.TempDir(), "receipts.jsonl")
	receipts, err := contract.NewReceipts(log)
	if err != nil {
		t.Fatal(err)
	}
	backend, err := contract.NewBackend(receipts, nil)
	if err != nil {
		t.Fatal(err)
	}
	install(backend, schemas(t))
	stop := make(chan struct{})
	defer close(stop)
	srv := httptest.NewServer(&contract.AHPHandler{Backend: backend,
		Policy: &sdk.ServerPolicy{Mode: "bearer", Token: "tok"}, Shutdown: stop})
	defer srv.Close()
	exchange := func(method, body, token string) (int, string, any) {
		req, _ := http.NewRequest(method, srv.URL+"/capabilities", strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		v, _ := sdk.Decode(data)
		if resp.StatusCode == 200 && resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type %q", method, resp.Header.Get("Content-Type"))
		}
		return resp.StatusCode, string(data), v
	}
	for _, token := range []string{"", "wrong"} {
		if status, body, _ := exchange(http.MethodGet, "", token); status != 401 || body != "" {
			t.Errorf("GET with %q: %d %q", token, status, body)
		}
	}
	status, body, got := exchange(http.MethodGet, "", "tok")
	if status != 200 {
		t.Fatalf("GET: %d %s", status, body)
	}
	if n := len(receipts.Snapshot()["discovery"].([]any)); n != 0 {
		t.Errorf("GET /capabilities was recorded: %d", n)
	}
	_, body, discovery := exchange(http.MethodPost,
		`{"jsonrpc":"2.0","id":5,"method":"hooks/capabilities","params":{"protocolVersion":"draft"}}`, "tok")
	var want any
	for _, e := range sdk.Path(discovery, "result", "manifest", "events").([]any) {
		if sdk.Equal(sdk.Path(e, "event"), "tool.before") {
			want = sdk.Path(e, "capabilities")
		}
	}
	if want == nil || !sdk.Equal(got, want) {
		t.Errorf("GET answered %s; the discovery (%s) has %s", sdk.EncodeString(got), body, sdk.EncodeString(want))
	}
	snap := receipts.Snapshot()
	if len(snap["discovery"].([]any)) != 1 || len(snap["requests"].([]any)) != 0 {
		t.Errorf("receipts: %s", sdk.EncodeString(snap))
	}
	if data, _ := os.ReadFile(log); strings.Count(string(data), "\n") != 1 {
		t.Errorf("receipt log: %q", data)
	}
}
