package lifecycle

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// GET /capabilities of every lifecycle-server suite: authentication first
// (401), then 200 application/json with exactly the capabilities of the
// tool.before intercept entry of the manifest the server answers
// hooks/capabilities with (no JSON-RPC envelope), never recorded.
func TestGetCapabilitiesIsTheBareToolBeforeCapabilities(t *testing.T) {
	s := schemas(t)
	discovery := `{"jsonrpc": "2.0", "id": 3, "method": "hooks/capabilities", "params": {"protocolVersion": "draft"}}`
	for _, suite := range []string{contract.SuiteLifecycle, contract.SuiteCatalogue, contract.SuiteCompaction, contract.SuiteElicitation} {
		t.Run(suite, func(t *testing.T) {
			proc := contract.NewSuiteServer(&contract.SuiteServerSettings{ServerSettings: &contract.ServerSettings{},
				Suite: suite, UploadToken: uploadToken})
			switch suite {
			case contract.SuiteLifecycle:
				proc.Backend = NewServer(s, proc, nil)
			case contract.SuiteCatalogue:
				proc.Backend = NewCatalogueServer(s, proc)
			case contract.SuiteCompaction:
				proc.Backend = NewCompactionServer(s, proc, nil)
			case contract.SuiteElicitation:
				proc.Backend = NewElicitationServer(s, proc, nil, "authenticated:test")
			}
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
			// the manifest hooks/capabilities is answered with; the
			// elicitation server answers none (a POSTed one is refused), so
			// its GET reads the core manifest
			var manifest any
			if suite == contract.SuiteElicitation {
				manifest = sdk.DiscoveryManifest()
			} else {
				_, _, answer := exchange(http.MethodPost, discovery, true)
				manifest = sdk.Path(answer, "result", "manifest")
			}
			var want any
			for _, e := range sdk.Path(manifest, "events").([]any) {
				intercept := false
				for _, mode := range sdk.Path(e, "modes").([]any) {
					intercept = intercept || mode == "intercept"
				}
				if sdk.Equal(sdk.Path(e, "event"), "tool.before") && intercept {
					want = sdk.Path(e, "capabilities")
				}
			}
			if want == nil || !sdk.Equal(got, want) {
				t.Errorf("GET answered %s, the tool.before entry has %s", sdk.EncodeString(got), sdk.EncodeString(want))
			}
		})
	}
}
