package contract

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"ahp-interop/adapters/go/sdk"
)

func TestEntryLogCountsAndWaits(t *testing.T) {
	l := NewEntryLog()
	if n := l.Record(map[string]any{"kind": EntryReceived, "id": "a"}, "id"); n != 1 {
		t.Fatalf("first receipt counted %d", n)
	}
	l.Record(map[string]any{"kind": EntryReplied, "id": "a"}, "id")
	if n := l.Record(map[string]any{"kind": EntryReceived, "id": "a"}, "id"); n != 2 {
		t.Fatalf("second receipt counted %d", n)
	}
	if !l.Wait(EntryReceived, "a", 2, time.Minute, nil) {
		t.Fatal("a wait for what is there did not return true")
	}
	stop := make(chan struct{})
	close(stop)
	if l.Wait(EntryReceived, "a", 3, time.Minute, stop) {
		t.Fatal("a wait for what is not there returned true")
	}
	done := make(chan bool)
	go func() { done <- l.Wait(EntryObserved, "e", 1, time.Minute, nil) }()
	l.Record(map[string]any{"kind": EntryObserved, "eventId": "e"}, "eventId")
	if !<-done {
		t.Fatal("a wait was not woken by the entry it waited for")
	}
	entries := l.Snapshot()["entries"].([]any)
	if len(entries) != 4 || sdk.Path(entries[1], "kind") != EntryReplied {
		t.Fatalf("entries not in recorded order: %s", sdk.EncodeString(entries))
	}
}

func TestSuiteControlCalls(t *testing.T) {
	entries, barriers := NewEntryLog(), NewBarriers()
	control := NewSuiteControl(entries, barriers)
	srv := httptest.NewServer(control)
	defer srv.Close()
	client := NewControlClient(srv.URL)
	defer client.Close()
	if err := client.Post("/mark", map[string]any{"scenario": "s", "kind": "acquired", "id": "a"}); err != nil {
		t.Fatal(err)
	}
	if err := client.Post("/mark", map[string]any{"scenario": "s", "kind": "received", "id": "a"}); err == nil {
		t.Fatal("a mark of a server-only kind was accepted")
	}
	gate := barriers.Wait("a")
	if err := client.Post("/release", map[string]any{"id": "a"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate:
	default:
		t.Fatal("/release did not open the id's gate")
	}
	if err := client.Post("/emit", map[string]any{"response": map[string]any{"id": "x"}}); err == nil ||
		!strings.Contains(err.Error(), "409") {
		t.Fatalf("/emit over HTTP: %v", err)
	}
	var emitted []any
	control.Emit = func(frame any) { emitted = append(emitted, frame) }
	if err := client.Post("/emit", map[string]any{"response": map[string]any{"id": "x"}}); err != nil || len(emitted) != 1 {
		t.Fatalf("/emit over stdio: %v %v", err, emitted)
	}
	entries.Record(map[string]any{"kind": EntryReceived, "id": "a"}, "id")
	if err := client.Post("/wait", map[string]any{"id": "a", "count": 1}); err != nil {
		t.Fatal(err)
	}
	if err := client.Post("/wait", map[string]any{"id": "a", "count": 0}); err == nil {
		t.Fatal("a count of 0 was accepted")
	}
	got, err := client.Call("GET", "/receipts", nil)
	kinds := []string{}
	for _, e := range sdk.Path(got, "entries").([]any) {
		kinds = append(kinds, sdk.Path(e, "kind").(string))
	}
	if err != nil || strings.Join(kinds, ",") != "acquired,emitted,received" {
		t.Fatalf("receipts: %v %v", kinds, err)
	}
	if err := client.Post("/shutdown", nil); err != nil {
		t.Fatal(err)
	}
	<-control.Done()
}

func rawUpload(t *testing.T, url string, header map[string][]string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestUploadReceiver(t *testing.T) {
	const token = "upload-token-0123456789"
	entries, store := NewEntryLog(), NewContentStore()
	srv := httptest.NewServer(&UploadHandler{Token: token, Store: store, Entries: entries})
	defer srv.Close()
	url := srv.URL + UploadPath
	data := []byte("some bytes")
	sum := SHA256Hex(data)
	send := func(payload []byte, size int64, sha, tok string) UploadAnswer {
		t.Helper()
		a, err := SendUpload(url, payload, size, sha, tok, 5*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := send(data, int64(len(data)), sum, token)
	receipt := a.Receipt()
	if a.Status != 201 || receipt == nil || !store.Has(receipt["ref"].(string)) {
		t.Fatalf("upload: %d %s", a.Status, a.Body)
	}
	b := send(data, int64(len(data)), sum, token)
	if b.Receipt()["ref"] == receipt["ref"] {
		t.Fatal("two uploads share a ref (allowed for identical bytes, but ours allocate fresh)")
	}
	cases := []struct {
		name   string
		answer UploadAnswer
		status int
	}{
		{"wrong token", send(data, int64(len(data)), sum, "another-token-0123456"), 401},
		{"no token", send(data, int64(len(data)), sum, ""), 401},
		{"wrong hash", send(data, int64(len(data)), strings.Repeat("0", 64), token), 400},
		{"short body", send(data, 99, sum, token), 400},
		{"bad hash syntax", send(data, int64(len(data)), "ABC", token), 400},
		{"too large", send(make([]byte, MaxUpload+1), MaxUpload+1, SHA256Hex(make([]byte, MaxUpload+1)), token), 413},
		{"empty", send(nil, 0, SHA256Hex(nil), token), 201},
	}
	for _, c := range cases {
		if c.answer.Status != c.status {
			t.Errorf("%s: status %d, want %d", c.name, c.answer.Status, c.status)
		}
	}
	good := map[string][]string{"Content-Type": {OctetStream}, HashHeader: {sum}}
	twice := map[string][]string{"Authorization": {"Bearer " + token, "Bearer " + token}}
	for k, v := range good {
		twice[k] = v
	}
	if s := rawUpload(t, url, twice, data); s != 400 {
		t.Errorf("two Authorization headers: %d", s)
	}
	encoded := map[string][]string{"Authorization": {"Bearer " + token}, "Content-Encoding": {"gzip"}}
	for k, v := range good {
		encoded[k] = v
	}
	if s := rawUpload(t, url, encoded, data); s != 400 {
		t.Errorf("a content coding: %d", s)
	}
	// every attempt is recorded with what the sender declared
	entries99 := 0
	for _, e := range entries.Snapshot()["entries"].([]any) {
		if n, _ := sdk.Integer(sdk.Path(e, "size")); n == 99 && sdk.Path(e, "status") == 400 {
			entries99++
		}
	}
	if entries99 != 1 {
		t.Error("the short upload was not recorded with its declared size")
	}
}

func TestWaitAnyAndCatalogueConfigs(t *testing.T) {
	l := NewEntryLog()
	l.Record(map[string]any{"kind": EntryObserved, "eventId": "e"}, "eventId")
	l.Record(map[string]any{"kind": EntryRejected, "eventId": "e"}, "eventId")
	if !l.WaitAny([]string{EntryObserved, EntryRejected}, "e", 2, time.Minute, nil) {
		t.Fatal("WaitAny did not count both kinds")
	}
	stop := make(chan struct{})
	close(stop)
	if l.Wait(EntryObserved, "e", 2, time.Minute, stop) {
		t.Fatal("Wait counted a rejected entry")
	}
	dir := t.TempDir()
	rows := dir + "/rows.json"
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rows, `{"version": 1, "suite": "catalogue", "scenarios": [{"id": "one", "steps": []}]}`)
	write(dir+"/server.json", `{"suite": "catalogue", "transport": "http", "readinessFile": "`+dir+`/ready.json",
		"scenarioFile": "`+rows+`", "auth": {"mode": "none"}}`)
	catalogue := SuiteSpec{Name: "catalogue"} // no uploads
	server, err := LoadSuiteServer(dir+"/server.json", catalogue)
	if err != nil || server.Suite != "catalogue" || server.UploadToken == "" {
		t.Fatalf("a catalogue server config without uploadAuth: %v", err)
	}
	write(dir+"/client.json", `{"suite": "catalogue", "transport": "http", "scenarioFile": "`+rows+`",
		"reportFile": "`+dir+`/report.json", "childPidFile": "`+dir+`/child.json", "auth": {"mode": "none"},
		"timeoutMs": 1000, "endpoint": "http://127.0.0.1:1/intercept", "controlEndpoint": "http://127.0.0.1:2"}`)
	client, err := LoadSuiteClient(dir+"/client.json", catalogue)
	if err != nil || client.Suite != "catalogue" || len(client.Scenarios) != 1 {
		t.Fatalf("a catalogue client config without upload: %v", err)
	}
}
