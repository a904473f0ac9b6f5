package suites

import (
	"os"
	"strings"
	"testing"

	"ahp-interop/adapters/go/contract"
	"ahp-interop/adapters/go/sdk"
)

// Every command of the usage line has a role; no other does.
func TestCommands(t *testing.T) {
	for _, command := range []string{contract.CommandClient, contract.CommandServer, contract.CommandReplay,
		contract.CommandLifecycleClient, contract.CommandLifecycleServer} {
		if Role(command) == nil {
			t.Errorf("%s has no role", command)
		}
	}
	if Role("teleport") != nil {
		t.Error("an unknown command has a role")
	}
	names := map[string]bool{}
	for _, s := range All {
		if names[s.Name] || len(s.Roles) == 0 {
			t.Errorf("suite %q: registered twice or with no role", s.Name)
		}
		names[s.Name] = true
	}
}

// A config naming a suite no package registers: the server exits 2 naming
// the suite field and the suites it implements, in registry order; the
// client reports every row unsupported naming the suite.
func TestOtherSuites(t *testing.T) {
	dir := t.TempDir()
	scenarios := dir + "/rows.json"
	os.WriteFile(scenarios, []byte(`{"scenarios": [{"id": "one"}, {"id": "two"}]}`), 0o644)
	server := dir + "/server.json"
	os.WriteFile(server, []byte(`{"suite": "future-suite", "transport": "http", "readinessFile": "`+dir+`/ready.json",
		"scenarioFile": "`+scenarios+`", "auth": {"mode": "none"}, "uploadAuth": {"token": "0123456789abcdef"}}`), 0o644)
	code, err := Role(contract.CommandLifecycleServer)(server)
	if code != 2 || !contract.IsConfigError(err) || !strings.Contains(err.Error(), "field suite") ||
		!strings.Contains(err.Error(), "(it implements lifecycle, compaction, elicitation, catalogue)") {
		t.Errorf("a server for another suite: %d %v", code, err)
	}
	client := dir + "/client.json"
	report := dir + "/report.json"
	os.WriteFile(client, []byte(`{"suite": "future-suite", "transport": "http", "scenarioFile": "`+scenarios+`",
		"reportFile": "`+report+`", "language": "go"}`), 0o644)
	if code, err := Role(contract.CommandLifecycleClient)(client); code != 0 || err != nil {
		t.Fatalf("a client for another suite: %d %v", code, err)
	}
	got, err := contract.ReadJSON(report)
	if err != nil {
		t.Fatal(err)
	}
	results := sdk.Path(got, "results").([]any)
	if len(results) != 2 || sdk.Path(results[1], "status") != "unsupported" ||
		!strings.Contains(sdk.Path(results[1], "error").(string), `"future-suite"`) {
		t.Errorf("report: %s", sdk.EncodeString(got))
	}
	// a config without a suite is unusable for both
	os.WriteFile(client, []byte(`{"transport": "http"}`), 0o644)
	for _, command := range []string{contract.CommandLifecycleClient, contract.CommandLifecycleServer} {
		if code, err := Role(command)(client); code != 2 || !contract.IsConfigError(err) || !strings.Contains(err.Error(), "suite") {
			t.Errorf("%s without a suite: %d %v", command, code, err)
		}
	}
}
