package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ahp-interop/adapters/go/sdk"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const rows = `{"version":1,"scenarios":[{"id":"a","request":{},"response":{"jsonrpc":"2.0","id":"a","result":{"x":1}}},
 {"id":"held","request":{},"response":null,"barrier":"gate"}]}`

func TestConfigErrorsNameTheField(t *testing.T) {
	dir := t.TempDir()
	scenarios := writeFile(t, dir, "s.json", rows)
	cases := map[string]string{
		`{"transport":"carrier-pigeon"}`: "transport",
		`{"transport":"http","scenarioFile":"` + scenarios + `","reportFile":"rel/path","auth":{"mode":"none","profile":"strict"},"timeoutMs":1,"endpoint":"http://127.0.0.1:1"}`: "reportFile",
		`{"transport":"http","scenarioFile":"` + scenarios + `","reportFile":"/r","auth":{"mode":"none","profile":"strict"},"timeoutMs":0,"endpoint":"http://127.0.0.1:1"}`:       "timeoutMs",
		`{"transport":"http","scenarioFile":"` + scenarios + `","reportFile":"/r","auth":{"mode":"bearer","profile":"strict"},"timeoutMs":5,"endpoint":"https://127.0.0.1:1"}`:    "auth.token",
		`{"transport":"http","scenarioFile":"` + scenarios + `","reportFile":"/r","auth":{"mode":"mtls","profile":"strict"},"timeoutMs":5,"endpoint":"https://127.0.0.1:1"}`:      "tls",
		`{"transport":"stdio","scenarioFile":"` + scenarios + `","reportFile":"/r","auth":{"mode":"none","profile":"strict"},"timeoutMs":5}`:                                      "serverCommand",
		`{"transport":"http","scenarioFile":"/nonexistent.json","reportFile":"/r","auth":{"mode":"none","profile":"strict"},"timeoutMs":5,"endpoint":"http://127.0.0.1:1"}`:       "scenarioFile",
		`{"transport":"http","transport":"http"}`: "",
	}
	for text, field := range cases {
		_, err := LoadClient(writeFile(t, dir, "c.json", text))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("%s: got %v, want a ConfigError on %q", text, err, field)
		}
	}
	_, err := LoadServer(writeFile(t, dir, "srv.json", `{"transport":"http","readinessFile":"/r","scenarioFile":"`+scenarios+`","auth":{"mode":"bearer","profile":"strict"}}`))
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "tls" {
		t.Errorf("strict bearer without tls: %v", err)
	}
}

func backend(t *testing.T) *Backend {
	t.Helper()
	dir := t.TempDir()
	scenarios, err := ReadScenarios(writeFile(t, dir, "s.json", rows))
	if err != nil {
		t.Fatal(err)
	}
	receipts, err := NewReceipts(filepath.Join(dir, "receipts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBackend(receipts, scenarios)
	if err != nil {
		t.Fatal(err)
	}
	b.Methods["hooks/intercept"] = func(msg map[string]any) Answer {
		row, ok := b.Scenario(msg["id"])
		if !ok {
			return Reply(RPCError(msg["id"], InvalidParams, "unknown scenario id", nil))
		}
		return b.Scripted(row)
	}
	return b
}

func post(t *testing.T, url, body string, header map[string][]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func TestHTTPListener(t *testing.T) {
	b := backend(t)
	stop := make(chan struct{})
	defer close(stop)
	policy := &sdk.ServerPolicy{Mode: "bearer", Token: "tok"}
	srv := httptest.NewServer(&AHPHandler{Backend: b, Policy: policy, Shutdown: stop})
	defer srv.Close()
	auth := map[string][]string{"Authorization": {"Bearer tok"}}
	request := `{"jsonrpc":"2.0","id":"a","method":"hooks/intercept","params":{}}`

	if status, _ := post(t, srv.URL+"/intercept", request, nil); status != 401 {
		t.Errorf("no Authorization: %d", status)
	}
	if status, _ := post(t, srv.URL+"/intercept", request, map[string][]string{"Authorization": {"Bearer tok", "Bearer tok"}}); status != 401 {
		t.Errorf("duplicate Authorization: %d", status)
	}
	if status, body := post(t, srv.URL+"/intercept", request, auth); status != 200 || body != `{"id":"a","jsonrpc":"2.0","result":{"x":1}}` {
		t.Errorf("scripted reply: %d %s", status, body)
	}
	if status, body := post(t, srv.URL+"/any/path", `{"a":1,"a":2}`, auth); status != 400 || !strings.Contains(body, "-32700") {
		t.Errorf("duplicate key: %d %s", status, body)
	}
	if status, _ := post(t, srv.URL+"/intercept", `{"pad":"`+strings.Repeat("x", MaxBody)+`"}`, auth); status != 413 {
		t.Errorf("oversized body: %d", status)
	}
	if status, _ := post(t, srv.URL+"/intercept", `{"jsonrpc":"2.0","method":"note"}`, auth); status != 204 {
		t.Errorf("notification: %d", status)
	}
	snap := b.Receipts.Snapshot()
	if len(snap["requests"].([]any)) != 1 || len(snap["notifications"].([]any)) != 1 {
		t.Errorf("receipts: %s", sdk.EncodeString(snap))
	}

	// a held reply waits for its release while other requests are answered
	done := make(chan string, 1)
	go func() {
		_, body := post(t, srv.URL+"/intercept", `{"jsonrpc":"2.0","id":"held","method":"hooks/intercept"}`, auth)
		done <- body
	}()
	for len(b.Receipts.Snapshot()["requests"].([]any)) < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	if status, _ := post(t, srv.URL+"/intercept", request, auth); status != 200 {
		t.Errorf("second connection not served while a reply is held: %d", status)
	}
	b.Barriers.Release("gate")
	if body := <-done; body != "null" {
		t.Errorf("held reply: %s", body)
	}
}

func TestControlListener(t *testing.T) {
	b := backend(t)
	c := NewControl(b)
	srv := httptest.NewServer(c)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(data) != `{"ready":true}` {
		t.Errorf("health: %s", data)
	}
	if _, body := post(t, srv.URL+"/release", `{"barrier":"g"}`, nil); body != `{"released":"g"}` {
		t.Errorf("release: %s", body)
	}
	if _, body := post(t, srv.URL+"/reset", `{}`, nil); body != `{"reset":true}` {
		t.Errorf("reset: %s", body)
	}
	if _, body := post(t, srv.URL+"/shutdown", ``, nil); body != `{"shutdown":true}` {
		t.Errorf("shutdown: %s", body)
	}
	<-c.Done()
}

func TestBarriers(t *testing.T) {
	b := NewBarriers()
	w := b.Wait("x")
	b.Release("x")
	<-w
	<-b.Wait("x") // sticky
	b.Reset()
	select {
	case <-b.Wait("x"):
		t.Fatal("a release survived Reset")
	default:
	}
	b.ReleaseAll()
	<-b.Wait("x")
	<-b.Wait("later")
}

func TestStdioLoop(t *testing.T) {
	b := backend(t)
	in := strings.NewReader("{\"jsonrpc\":\"2.0\",\"id\":\"held\",\"method\":\"hooks/intercept\"}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"hooks/intercept\"}\r\n" +
		"not json\n" + "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}")
	var out bytes.Buffer
	ServeStdio(b, in, &out, make(chan struct{}))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	// the held reply goes out last (released at EOF); nothing answers the notification
	want := []string{`{"id":"a","jsonrpc":"2.0","result":{"x":1}}`, `{"error":{"code":-32700,"message":"parse error"},"id":null,"jsonrpc":"2.0"}`, `null`}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("stdio lines:\n%s", out.String())
	}
	log, _ := os.ReadFile(b.Receipts.log.Name())
	if n := strings.Count(string(log), "\n"); n != 3 {
		t.Errorf("receipt log has %d lines:\n%s", n, log)
	}
}

func TestStdioPeerKillsTheGroup(t *testing.T) {
	// the "server" starts a grandchild, prints its pid as the response, then echoes
	p, err := StartStdio([]string{"sh", "-c", `sleep 300 & echo "{\"pid\":$!}"; exec cat`}, t.TempDir(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Exchange(map[string]any{"jsonrpc": "2.0", "id": "x"})
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := sdk.Integer(sdk.Path(v, "pid"))
	if echoed, err := p.Exchange(map[string]any{"k": json.Number("1")}); err != nil || sdk.EncodeString(echoed) != `{"id":"x","jsonrpc":"2.0"}` {
		t.Errorf("second line: %v %v", sdk.EncodeString(echoed), err)
	}
	p.Close()
	for i := 0; i < 500; i++ { // wait (bounded) until init has reaped the killed grandchild
		if syscall.Kill(int(pid), 0) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("grandchild %d survived Close", pid)
}

// GET /capabilities answers the bare capabilities of the tool.before
// intercept entry of the backend's manifest (wherever it stands), after
// authentication, and is never dispatched: no receipt.
func TestGetCapabilitiesAnswersTheBackendManifest(t *testing.T) {
	b := backend(t)
	b.Manifest = func() map[string]any {
		v, _ := sdk.Decode([]byte(`{"events": [
			{"event": "tool.after", "modes": ["intercept"], "capabilities": {"effects": ["message"]}},
			{"event": "tool.before", "modes": ["observe", "intercept"], "capabilities": {"effects": ["deny"]}}]}`))
		return v.(map[string]any)
	}
	stop := make(chan struct{})
	defer close(stop)
	srv := httptest.NewServer(&AHPHandler{Backend: b, Policy: &sdk.ServerPolicy{Mode: "bearer", Token: "tok"}, Shutdown: stop})
	defer srv.Close()
	get := func(path string, auth bool) (int, string, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if auth {
			req.Header.Set("Authorization", "Bearer tok")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(data)
	}
	if status, _, body := get("/capabilities", false); status != 401 || body != "" {
		t.Errorf("unauthenticated: %d %q", status, body)
	}
	if status, kind, body := get("/capabilities", true); status != 200 || kind != "application/json" || body != `{"effects":["deny"]}` {
		t.Errorf("GET /capabilities: %d %q %s", status, kind, body)
	}
	if status, _, _ := get("/other", true); status != 404 {
		t.Errorf("GET /other: %d", status)
	}
	snap := b.Receipts.Snapshot()
	for _, kind := range []string{"requests", "discovery", "notifications"} {
		if len(snap[kind].([]any)) != 0 {
			t.Errorf("receipts: %s", sdk.EncodeString(snap))
		}
	}
}
