package contract

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"ahp-interop/adapters/go/sdk"
)

// TransportError: no response could be had; the row failed.
type TransportError struct{ Msg string }

func (e *TransportError) Error() string { return e.Msg }

// MalformedResponse: a response arrived but is not strict JSON; a rejection.
type MalformedResponse struct{ Msg string }

func (e *MalformedResponse) Error() string { return e.Msg }

// Peer sends one request and returns its parsed response.
type Peer interface {
	Exchange(request any) (any, error)
	Close()
}

// brokenPeer fails every exchange alike (no connection can be had).
type brokenPeer struct{ reason string }

func (p brokenPeer) Exchange(any) (any, error) { return nil, &TransportError{p.reason} }
func (p brokenPeer) Close()                    {}

// MaxResponse bounds a response body or line.
const MaxResponse = 64 << 20

// InterceptURL is endpoint when its path ends in /intercept, else endpoint + "/intercept".
func InterceptURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	if !strings.HasSuffix(u.Path, "/intercept") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/intercept"
	}
	return u.String()
}

type httpPeer struct {
	url    string
	token  string
	client *http.Client
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func newTransport(cfg *tls.Config) *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Transport{
		Proxy:               nil,
		DialContext:         dialer.DialContext, // Go sets TCP_NODELAY on every TCP connection
		TLSClientConfig:     cfg,
		MaxConnsPerHost:     1,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

// NewPeer makes the peer a client config names: an HTTP endpoint with its
// credentials, or a spawned stdio server. A peer that cannot be had fails
// every row alike.
func NewPeer(c *ClientSettings) (Peer, error) {
	timeout := time.Duration(c.TimeoutMs) * time.Millisecond
	if c.Transport == "stdio" {
		p, err := StartStdio(append(append([]string{}, c.ServerCommand...), "--config", c.ServerConfig), c.ServerCwd, timeout)
		if err != nil {
			return brokenPeer{fmt.Sprintf("cannot start the stdio server: %v", err)}, nil
		}
		return p, nil
	}
	target := InterceptURL(c.Endpoint)
	a := c.Auth
	secure := strings.HasPrefix(target, "https://")
	if a.Profile == Strict && a.Mode != ModeNone && !secure {
		return brokenPeer{fmt.Sprintf("profile strict refuses auth mode %s over plain HTTP", a.Mode)}, nil
	}
	if a.Mode == ModeMTLS && !secure {
		return brokenPeer{"auth mode mtls needs an https endpoint"}, nil
	}
	var cfg *tls.Config
	if secure || a.Mode == ModeOAuth {
		var err error
		if cfg, err = ClientTLS(a.TLS); err != nil {
			return nil, &ConfigError{File: c.File, Field: a.TLS.Field, Msg: err.Error()}
		}
	}
	token := a.Token
	if a.Mode == ModeOAuth {
		var err error
		if token, err = FetchToken(a, cfg, timeout); err != nil {
			return brokenPeer{fmt.Sprintf("authentication failed: %v", err)}, nil
		}
	}
	return &httpPeer{
		url:    target,
		token:  token,
		client: &http.Client{Transport: newTransport(cfg), Timeout: timeout, CheckRedirect: noRedirects},
	}, nil
}

func (p *httpPeer) Exchange(request any) (any, error) {
	body := sdk.Encode(request)
	req, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, &TransportError{err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, &TransportError{fmt.Sprintf("request failed: %v", err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return nil, &TransportError{fmt.Sprintf("reading the response failed: %v", err)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &TransportError{fmt.Sprintf("HTTP status %d", resp.StatusCode)}
	}
	if len(data) > MaxResponse {
		return nil, &MalformedResponse{"response body too large"}
	}
	v, err := sdk.Decode(data)
	if err != nil {
		return nil, &MalformedResponse{err.Error()}
	}
	return v, nil
}

func (p *httpPeer) Close() { p.client.CloseIdleConnections() }

// FetchToken runs the OAuth client-credentials grant once: a form POST,
// redirects refused (a 3xx is a failure), HTTPS required in strict.
func FetchToken(a *ClientAuth, cfg *tls.Config, timeout time.Duration) (string, error) {
	u, err := url.Parse(a.TokenEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("auth.tokenEndpoint must be an http(s) URL")
	}
	if a.Profile == Strict && u.Scheme != "https" {
		return "", errors.New("profile strict needs an https token endpoint")
	}
	form := url.Values{}
	form.Set("grant_type", "client_credentials")
	form.Set("client_id", a.ClientID)
	form.Set("client_secret", a.ClientSecret)
	form.Set("audience", a.Audience)
	req, err := http.NewRequest(http.MethodPost, a.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	transport := newTransport(cfg)
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: timeout, CheckRedirect: noRedirects}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("token endpoint unreachable: %T", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", errors.New("token endpoint answer unreadable")
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token endpoint answered HTTP %d", resp.StatusCode)
	}
	answer, err := sdk.Decode(data)
	if err != nil {
		return "", errors.New("token endpoint answer is not strict JSON")
	}
	token, _ := sdk.Path(answer, "access_token").(string)
	kind, _ := sdk.Path(answer, "token_type").(string)
	if token == "" {
		return "", errors.New("token endpoint answer has no access_token")
	}
	if !strings.EqualFold(kind, "bearer") {
		return "", errors.New("token endpoint answer is not a Bearer token")
	}
	return token, nil
}

// Children: every process group a client spawned, killed on every exit path.
var children struct {
	sync.Mutex
	groups map[int]bool
}

// KillChildren kills every process group still registered.
func KillChildren() {
	children.Lock()
	defer children.Unlock()
	for pgid := range children.groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		delete(children.groups, pgid)
	}
}

func register(pgid int, add bool) {
	children.Lock()
	defer children.Unlock()
	if children.groups == nil {
		children.groups = map[int]bool{}
	}
	if add {
		children.groups[pgid] = true
	} else {
		delete(children.groups, pgid)
	}
}

type line struct {
	data []byte
	err  error
}

// StdioPeer talks NDJSON to a server it spawned in its own process group.
type StdioPeer struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan line
	timeout time.Duration
	pgid    int
	waited  chan struct{}
	closed  bool
}

// StartStdio spawns argv in dir in a new process group.
func StartStdio(argv []string, dir string, timeout time.Duration) (*StdioPeer, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &StdioPeer{cmd: cmd, stdin: stdin, lines: make(chan line, 16), timeout: timeout,
		pgid: cmd.Process.Pid, waited: make(chan struct{})}
	register(p.pgid, true)
	go func() {
		r := bufio.NewReaderSize(stdout, 64<<10)
		for {
			data, err := readLine(r)
			if len(data) > 0 {
				p.lines <- line{data: data}
			}
			if err != nil {
				p.lines <- line{err: err}
				close(p.lines)
				return
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(p.waited)
	}()
	return p, nil
}

// Exchange writes one request line and reads one response line.
func (p *StdioPeer) Exchange(request any) (any, error) {
	if p.closed {
		return nil, &TransportError{"the stdio server is gone"}
	}
	data := append(sdk.Encode(request), '\n')
	if _, err := p.stdin.Write(data); err != nil {
		return nil, &TransportError{fmt.Sprintf("writing to the stdio server failed: %v", err)}
	}
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	select {
	case l, ok := <-p.lines:
		if !ok || l.err != nil {
			p.closed = true
			return nil, &TransportError{"the stdio server closed its stdout"}
		}
		if len(l.data) > MaxResponse {
			return nil, &MalformedResponse{"response line too long"}
		}
		v, err := sdk.Decode(l.data)
		if err != nil {
			return nil, &MalformedResponse{err.Error()}
		}
		return v, nil
	case <-timer.C:
		return nil, &TransportError{fmt.Sprintf("no response within %s", p.timeout)}
	}
}

// Close closes stdin, waits briefly, then kills the whole process group.
func (p *StdioPeer) Close() {
	_ = p.stdin.Close()
	select {
	case <-p.waited:
	case <-time.After(2 * time.Second):
	}
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	<-p.waited
	register(p.pgid, false)
}
