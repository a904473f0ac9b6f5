package contract

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"ahp-interop/adapters/go/sdk"
)

// MaxLine bounds one stdio line.
const MaxLine = 64 << 20

// RunServer runs a server process: the control listener, the AHP listener
// (HTTP) or the stdin loop (stdio), the readiness file; it returns the exit
// code once shut down (POST /shutdown, EOF on stdin, SIGTERM/SIGINT).
func RunServer(s *ServerSettings, b *Backend) (int, error) {
	control := NewControl(b)
	controlListener, err := Listen()
	if err != nil {
		return 1, err
	}
	controlServer := NewHTTPServer(control)
	go controlServer.Serve(controlListener)
	controlURL := fmt.Sprintf("http://127.0.0.1:%d", Port(controlListener))

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		control.Stop()
	}()

	var ahp *http.Server
	var endpoint any
	stdioDone := make(chan struct{})
	if s.Transport == "http" {
		var policy *sdk.ServerPolicy
		var tlsConfig *tls.Config
		if s.Auth != nil {
			policy = &s.Auth.Policy
			if s.Auth.TLS != nil {
				if tlsConfig, err = ServerTLS(s.Auth.TLS); err != nil {
					return 2, &ConfigError{File: s.File, Field: s.Auth.TLS.Field, Msg: err.Error()}
				}
			}
		}
		listener, err := Listen()
		if err != nil {
			return 1, err
		}
		ahp = NewHTTPServer(&AHPHandler{Backend: b, Policy: policy, Shutdown: control.Done()})
		scheme := "http"
		if tlsConfig != nil {
			scheme = "https"
			ahp.TLSConfig = tlsConfig
			listener = quietTLSListener{tls.NewListener(listener, tlsConfig)}
		}
		go ahp.Serve(listener)
		endpoint = fmt.Sprintf("%s://127.0.0.1:%d/intercept", scheme, Port(listener))
	} else {
		go func() {
			ServeStdio(b, os.Stdin, os.Stdout, control.Done())
			close(stdioDone)
		}()
	}
	if err := WriteReadiness(s.ReadinessFile, endpoint, controlURL); err != nil {
		return 1, err
	}
	select {
	case <-control.Done():
	case <-stdioDone:
	}
	b.Barriers.ReleaseAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if ahp != nil {
		_ = ahp.Shutdown(ctx)
	}
	_ = controlServer.Shutdown(ctx)
	return 0, nil
}

// ServeStdio answers one compact JSON-RPC object per line until EOF (or
// stop). A held reply goes out from its own goroutine; other lines are
// answered meanwhile. Writes are whole lines under one lock.
func ServeStdio(b *Backend, in io.Reader, out io.Writer, stop <-chan struct{}) {
	var mu sync.Mutex
	var held sync.WaitGroup
	w := bufio.NewWriter(out)
	write := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		w.Write(sdk.Encode(v))
		w.WriteByte('\n')
		w.Flush()
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(line) > 0 {
			if len(line) > MaxLine {
				write(RPCError(nil, ParseError, "line too long", nil))
			} else if msg, perr := sdk.Decode(line); perr != nil {
				write(RPCError(nil, ParseError, "parse error", nil))
			} else {
				a := b.Dispatch(msg)
				if a.HasReply {
					if a.Gate == nil {
						write(a.Reply)
					} else {
						held.Add(1)
						go func(a Answer) {
							defer held.Done()
							select {
							case <-a.Gate:
							case <-stop:
							}
							write(a.Reply)
						}(a)
					}
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(os.Stderr, "ahp-go server: stdin: %v\n", err)
			}
			break
		}
	}
	b.Barriers.ReleaseAll()
	held.Wait()
}

// readLine reads one line without its terminator (and a CR before it);
// a line longer than MaxLine is returned truncated past MaxLine.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line) <= MaxLine {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
			if n > 1 && line[n-2] == '\r' {
				line = line[:n-2]
			}
		}
		return line, err
	}
}

// quietTLSListener hides the *tls.Conn type from net/http, which would
// otherwise answer plain HTTP sent to the TLS port with "400 Bad Request":
// a TLS listener cannot answer in HTTP, so the connection is just closed
// (docs/AUTH.md). The handshake runs on the first read, alerts included.
type quietTLSListener struct{ net.Listener }

type tlsConn struct{ net.Conn }

func (l quietTLSListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return tlsConn{c}, nil
}
