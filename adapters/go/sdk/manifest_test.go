package sdk

import "testing"

// toolBeforeEntry is the manifest's one tool.before entry in intercept mode.
func toolBeforeEntry(t *testing.T, manifest map[string]any) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, e := range manifest["events"].([]any) {
		entry := e.(map[string]any)
		if entry["event"] == "tool.before" && containsValue(entry["modes"].([]any), "intercept") {
			found = append(found, entry)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d tool.before intercept entries", len(found))
	}
	return found[0]
}

// GET /capabilities answers exactly the capabilities of the tool.before
// entry, a copy, valid under the canonical capabilities.schema.json (what
// upstream clients validate), for the core manifest and M.
func TestGetCapabilitiesIsTheBareToolBeforeCapabilities(t *testing.T) {
	s := elicitationSchemas(t)
	for name, manifest := range map[string]map[string]any{"core": DiscoveryManifest(), "catalogue": CatalogueManifest()} {
		entry := toolBeforeEntry(t, manifest)
		got := GetCapabilities(manifest)
		if !Equal(got, entry["capabilities"]) {
			t.Errorf("%s: %s, the entry has %s", name, EncodeString(got), EncodeString(entry["capabilities"]))
		}
		if _, envelope := got["jsonrpc"]; envelope {
			t.Errorf("%s: an envelope", name)
		}
		if problem := s.Check("capabilities.schema.json", Clone(got)); problem != "" {
			t.Errorf("%s: %s", name, problem)
		}
		got["effects"] = []any{}
		if Equal(got, entry["capabilities"]) {
			t.Errorf("%s: the answer aliases the manifest", name)
		}
	}
	if !Equal(DiscoveryResult()["manifest"], DiscoveryManifest()) {
		t.Errorf("hooks/capabilities and GET /capabilities read different manifests")
	}
}

func TestGetCapabilitiesWithoutToolBeforeIsTheFirstInterceptEntry(t *testing.T) {
	manifest := text(t, `{"events": [
		{"event": "tool.before", "modes": ["observe"]},
		{"event": "turn.start", "modes": ["intercept"], "capabilities": {"effects": ["deny"]}},
		{"event": "tool.after", "modes": ["intercept"], "capabilities": {"effects": []}}]}`).(map[string]any)
	if got := GetCapabilities(manifest); !Equal(got, map[string]any{"effects": []any{"deny"}}) {
		t.Errorf("got %s", EncodeString(got))
	}
	if got := GetCapabilities(map[string]any{"events": []any{}}); got != nil {
		t.Errorf("no intercept entry: %s", EncodeString(got))
	}
}
