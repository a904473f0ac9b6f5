package core

import (
	"errors"
	"os"
	"path/filepath"
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
