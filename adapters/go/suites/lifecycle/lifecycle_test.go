package lifecycle

import (
	"testing"

	"ahp-interop/adapters/go/contract/steps/stepstest"
	"ahp-interop/adapters/go/sdk"
)

// GET /capabilities answers the bare capabilities of the tool.before
// intercept entry of the core manifest, the one hooks/capabilities answers.
func TestGetCapabilities(t *testing.T) {
	got, posted := stepstest.GetCapabilities(t, server)
	manifest := sdk.Path(posted, "result", "manifest")
	want := stepstest.ToolBefore(manifest)
	if want == nil || !sdk.Equal(got, want) || !sdk.Equal(manifest, sdk.DiscoveryManifest()) {
		t.Errorf("GET answered %s, the tool.before entry has %s", sdk.EncodeString(got), sdk.EncodeString(want))
	}
}

// A row runs as a step row: unsupported with the op it does not know.
func TestRowsRunStepRows(t *testing.T) {
	row := map[string]any{"id": "odd", "requests": map[string]any{}, "steps": stepstest.List(t, `[{"op": "teleport"}]`)}
	r := stepstest.New(t, server, rows{}, row)
	defer r.Close()
	got := r.Result(row)
	if got["status"] != "unsupported" || got["error"] != `step op "teleport" is not implemented by ahp-go` {
		t.Errorf("an unknown op: %s", sdk.EncodeString(got))
	}
}
