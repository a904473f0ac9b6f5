package contract

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"ahp-interop/adapters/go/sdk"
)

// Content upload (docs/LIFECYCLE.md, "Uploads"): raw octets POSTed to the
// receiver's own plain-HTTP loopback listener, answered 201 {ref, size, sha256}.
const (
	MaxUpload   = 1 << 20
	UploadPath  = "/upload"
	HashHeader  = "AHP-Content-SHA256"
	OctetStream = "application/octet-stream"
	drainLimit  = 64 * MaxUpload
)

var (
	sha256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
	digits        = regexp.MustCompile(`^[0-9]{1,20}$`)
)

// SHA256Hex is the lowercase hex SHA-256 of data.
func SHA256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// NewRef allocates a receiver reference (urn:uuid:, version 4).
func NewRef() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return "urn:uuid:" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// RandomToken is 32 random bytes in hex (an upload credential nobody is given).
func RandomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ContentStore holds immutable bytes by receiver reference.
type ContentStore struct {
	mu    sync.Mutex
	blobs map[string][]byte
}

// NewContentStore makes an empty store.
func NewContentStore() *ContentStore { return &ContentStore{blobs: map[string][]byte{}} }

// Put stores a copy of data under a new reference.
func (s *ContentStore) Put(data []byte) string {
	ref := NewRef()
	s.mu.Lock()
	s.blobs[ref] = append([]byte{}, data...)
	s.mu.Unlock()
	return ref
}

// Has reports whether ref names stored bytes.
func (s *ContentStore) Has(ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.blobs[ref]
	return ok
}

// UploadHandler receives uploads; every attempt is recorded as an upload
// entry (the declared size and hash; ref only on a 201) before its answer.
type UploadHandler struct {
	Token   string
	Store   *ContentStore
	Entries *EntryLog
}

func (h *UploadHandler) authorization(values []string) int {
	if len(values) > 1 {
		return http.StatusBadRequest
	}
	if len(values) == 0 || !strings.HasPrefix(values[0], "Bearer ") {
		return http.StatusUnauthorized
	}
	token := strings.TrimSpace(values[0][len("Bearer "):])
	if subtle.ConstantTimeCompare([]byte(token), []byte(h.Token)) != 1 {
		return http.StatusUnauthorized
	}
	return 0
}

func (h *UploadHandler) headerStatus(r *http.Request, lengths []string, size int64, hash string) int {
	if status := h.authorization(r.Header.Values("Authorization")); status != 0 {
		return status
	}
	if len(r.TransferEncoding) > 0 || len(r.Header.Values("Transfer-Encoding")) > 0 ||
		len(r.Header.Values("Content-Encoding")) > 0 {
		return http.StatusBadRequest
	}
	types := r.Header.Values("Content-Type")
	if len(types) != 1 || !strings.EqualFold(strings.TrimSpace(strings.SplitN(types[0], ";", 2)[0]), OctetStream) {
		return http.StatusBadRequest
	}
	if len(lengths) != 1 || size < 0 {
		return http.StatusBadRequest
	}
	if size > MaxUpload {
		return http.StatusRequestEntityTooLarge
	}
	if len(r.Header.Values(HashHeader)) != 1 || !sha256Pattern.MatchString(hash) {
		return http.StatusBadRequest
	}
	return 0
}

func (h *UploadHandler) record(status int, size int64, hash, ref string) {
	entry := map[string]any{"kind": EntryUpload, "status": status, "size": size, "sha256": hash}
	if ref != "" {
		entry["ref"] = ref
	}
	h.Entries.Record(entry, "ref")
}

func (h *UploadHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != UploadPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	lengths := r.Header.Values("Content-Length")
	size := int64(-1)
	if len(lengths) == 1 && digits.MatchString(strings.TrimSpace(lengths[0])) {
		if n, err := strconv.ParseInt(strings.TrimSpace(lengths[0]), 10, 64); err == nil {
			size = n
		}
	}
	hash := ""
	if values := r.Header.Values(HashHeader); len(values) == 1 {
		hash = strings.TrimSpace(values[0])
	}
	declared := size
	if declared < 0 {
		declared = 0
	}
	if status := h.headerStatus(r, lengths, size, hash); status != 0 {
		h.record(status, declared, hash, "")
		refuseUnread(w, status, "refused before the body was read")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, size+1))
	if err != nil || int64(len(data)) != size {
		h.record(http.StatusBadRequest, size, hash, "")
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "body shorter than its length"})
		return
	}
	if SHA256Hex(data) != hash {
		h.record(http.StatusBadRequest, size, hash, "")
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": HashHeader + " differs"})
		return
	}
	ref := h.Store.Put(data)
	h.record(http.StatusCreated, size, hash, ref)
	writeJSON(w, http.StatusCreated, map[string]any{"ref": ref, "size": size, "sha256": hash})
}

// refuseUnread answers without reading the body, half-closes, and drains
// what the sender still writes (bounded), so the answer is not lost to a
// reset.
func refuseUnread(w http.ResponseWriter, status int, why string) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.Header().Set("Connection", "close")
		writeJSON(w, status, map[string]any{"error": why})
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	body := sdk.Encode(map[string]any{"error": why})
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		status, http.StatusText(status), len(body))
	buf.Write(body)
	if buf.Flush() != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.CloseWrite()
	}
	_ = conn.SetReadDeadline(time.Now().Add(StallLimit))
	_, _ = io.CopyN(io.Discard, buf, drainLimit)
}

// UploadAnswer is what an upload got back.
type UploadAnswer struct {
	Status int
	Body   []byte
}

// Receipt is the 201 body when it is exactly {ref, size, sha256} with a
// non-empty string ref, an integer size and a string hash; else nil.
func (a UploadAnswer) Receipt() map[string]any {
	v, err := sdk.Decode(a.Body)
	m, _ := v.(map[string]any)
	if err != nil || len(m) != 3 {
		return nil
	}
	ref, _ := m["ref"].(string)
	_, isInt := sdk.Integer(m["size"])
	_, isString := m["sha256"].(string)
	if ref == "" || !isInt || !isString {
		return nil
	}
	return m
}

// SendUpload POSTs data declaring size and sha256 as they are (a body
// shorter than size is sent whole and the write side shut, a longer one is
// cut at size), with token unless it is "". Redirects are never followed
// (a 3xx is its status). An error: no answer came back.
func SendUpload(endpoint string, data []byte, size int64, sha string, token string,
	timeout time.Duration, tlsConfig *tls.Config) (UploadAnswer, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return UploadAnswer{}, fmt.Errorf("upload endpoint is not an http(s) URL: %q", endpoint)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	var head strings.Builder
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s: %s\r\nConnection: close\r\n",
		path, u.Host, OctetStream, size, HashHeader, sha)
	if token != "" {
		fmt.Fprintf(&head, "Authorization: Bearer %s\r\n", token)
	}
	head.WriteString("\r\n")
	body := data
	if int64(len(body)) > size && size >= 0 {
		body = body[:size]
	}
	deadline := time.Now().Add(timeout)
	raw, err := net.DialTimeout("tcp", net.JoinHostPort(u.Hostname(), port), timeout)
	if err != nil {
		return UploadAnswer{}, fmt.Errorf("upload connection failed: %v", err)
	}
	conn := raw
	defer func() { conn.Close() }()
	_ = raw.SetDeadline(deadline)
	if u.Scheme == "https" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if tlsConfig != nil {
			cfg = tlsConfig.Clone()
		}
		cfg.ServerName = u.Hostname()
		tc := tls.Client(raw, cfg)
		if err := tc.Handshake(); err != nil {
			return UploadAnswer{}, fmt.Errorf("upload TLS handshake failed: %v", err)
		}
		conn = tc
	}
	// the receiver may answer (and close) before reading it all: write errors are not fatal
	if _, err := conn.Write(append([]byte(head.String()), body...)); err == nil && int64(len(body)) < size {
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return UploadAnswer{}, fmt.Errorf("upload got no answer: %v", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	if err != nil {
		return UploadAnswer{}, fmt.Errorf("upload answer unreadable: %v", err)
	}
	return UploadAnswer{Status: resp.StatusCode, Body: answer}, nil
}
