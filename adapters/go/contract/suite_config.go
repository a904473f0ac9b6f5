package contract

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"ahp-interop/adapters/go/sdk"
)

// SuiteSpec is what one suite's configs carry beyond the common keys
// (schemas/contract/<suite>-{client,server}-config.schema.json). Each suite
// states its own; this layer knows no suite by name.
type SuiteSpec struct {
	// Name is the config's suite.
	Name string
	// Uploads: the server config must carry uploadAuth and the client config
	// an upload block (then contentSources too). Without it the server may
	// carry uploadAuth (else its upload token is one nobody holds) and the
	// client reads neither upload nor contentSources.
	Uploads bool
	// ContentSources: a client config with uploads must carry contentSources
	// (else an absent one is []).
	ContentSources bool
}

// Unreachable is the reserved backend name a client config's backends define.
const Unreachable = "unreachable"

// SuiteOf reads a config's suite field ("" with a ConfigError when the file
// is unusable or the field is not a non-empty string).
func SuiteOf(path string) (string, error) {
	f, err := loadFields(path)
	if err != nil {
		return "", err
	}
	return f.str("suite")
}

// RequireSuite: a server exits 2 naming the suite field when it is not one
// it implements.
func RequireSuite(path string, implemented ...string) (string, error) {
	suite, err := SuiteOf(path)
	if err != nil {
		return "", err
	}
	for _, s := range implemented {
		if s == suite {
			return suite, nil
		}
	}
	return "", &ConfigError{File: path, Field: "suite",
		Msg: fmt.Sprintf("%s is not implemented by ahp-go (it implements %s)", sdk.EncodeString(suite),
			strings.Join(implemented, ", "))}
}

// SuiteServerSettings is a lifecycle-style server config.
type SuiteServerSettings struct {
	*ServerSettings
	Suite       string
	UploadToken string
}

// LoadSuiteServer reads a lifecycle server config of the suite spec
// describes (the caller found spec by the config's suite, RequireSuite).
func LoadSuiteServer(path string, spec SuiteSpec) (*SuiteServerSettings, error) {
	base, err := LoadServer(path)
	if err != nil {
		return nil, err
	}
	f, _ := loadFields(path)
	up, err := f.section("uploadAuth", spec.Uploads)
	if err != nil {
		return nil, err
	}
	token := ""
	if up != nil {
		if token, err = up.str("token"); err != nil {
			return nil, err
		}
	} else {
		token = RandomToken() // no upload is expected: nobody holds the credential
	}
	return &SuiteServerSettings{ServerSettings: base, Suite: spec.Name, UploadToken: token}, nil
}

// UploadRoute is where one upload goes and with what: the endpoint (""
// the server's), the variable holding its bearer token ("" none), the
// timeout, and the CA verifying an https endpoint ("" the system's).
type UploadRoute struct {
	Endpoint, TokenEnv string
	Timeout            time.Duration
	CAFile             string
}

// ContentSource is a descriptor with its bytes.
type ContentSource struct {
	Ref, SHA256 string
	Size        int64
	Data        []byte
}

// BackendSettings describe a backend other than the run's server.
type BackendSettings struct {
	Endpoint string
	Command  []string
}

// SuiteClientSettings is a lifecycle-style client config.
type SuiteClientSettings struct {
	*ClientSettings
	Suite           string
	ChildPidFile    string
	ControlEndpoint string
	Upload          UploadRoute
	ContentSources  []ContentSource
	Backends        map[string]BackendSettings
}

// Timeout is the config's timeoutMs.
func (s *SuiteClientSettings) Timeout() time.Duration {
	return time.Duration(s.TimeoutMs) * time.Millisecond
}

func positiveMs(f fields, key string) (time.Duration, error) {
	n, ok := sdk.Integer(f.data[key])
	if !ok || n < 1 {
		return 0, f.err(key, "must be a positive integer")
	}
	return time.Duration(n) * time.Millisecond, nil
}

// ParseUploadRoute reads an upload block (the config's, or a step's, whose
// endpoint defaults to def). A block without auth uploads with no
// credential; its tls.caFile verifies an https endpoint.
func ParseUploadRoute(data map[string]any, file, prefix, def string) (UploadRoute, error) {
	f := fields{data: data, file: file, prefix: prefix}
	var r UploadRoute
	var err error
	if r.Endpoint, err = f.optStr("endpoint"); err != nil {
		return r, err
	}
	if r.Endpoint == "" {
		r.Endpoint = def
	}
	if r.Timeout, err = positiveMs(f, "timeoutMs"); err != nil {
		return r, err
	}
	if auth, err := f.section("auth", false); err != nil {
		return r, err
	} else if auth != nil {
		if _, err := auth.choice("type", "", "bearer"); err != nil {
			return r, err
		}
		if r.TokenEnv, err = auth.str("tokenEnv"); err != nil {
			return r, err
		}
	}
	if sec, err := f.section("tls", false); err != nil {
		return r, err
	} else if sec != nil {
		if r.CAFile, err = sec.path("caFile"); err != nil {
			return r, err
		}
	}
	return r, nil
}

// LoadOtherSuiteClient reads a lifecycle client config of a suite this
// adapter does not implement: the settings carry only Suite, the rows, the
// report file and the language (the caller reports every row unsupported),
// and over stdio what spawning the server takes, so its (empty) receipts
// can be reported.
func LoadOtherSuiteClient(path string) (*SuiteClientSettings, error) {
	suite, err := SuiteOf(path)
	if err != nil {
		return nil, err
	}
	f, _ := loadFields(path)
	c := &ClientSettings{File: path}
	if _, c.Scenarios, err = f.scenarios("scenarioFile"); err != nil {
		return nil, err
	}
	if c.ReportFile, err = f.path("reportFile"); err != nil {
		return nil, err
	}
	if c.Language, err = f.optStr("language"); err != nil {
		return nil, err
	}
	if c.Language == "" {
		c.Language = DefaultLanguage
	}
	other := &SuiteClientSettings{ClientSettings: c, Suite: suite}
	if f.data["transport"] == "stdio" && f.has("serverCommand") {
		c.Transport = "stdio"
		if c.ServerCommand, err = f.command("serverCommand"); err != nil {
			return nil, err
		}
		if c.ServerCwd, err = f.path("serverCwd"); err != nil {
			return nil, err
		}
		if c.ServerConfig, err = f.path("serverConfig"); err != nil {
			return nil, err
		}
		if other.ChildPidFile, err = f.path("childPidFile"); err != nil {
			return nil, err
		}
	}
	return other, nil
}

// LoadSuiteClient reads a lifecycle client config of the suite spec
// describes (the caller found spec by the config's suite, SuiteOf).
func LoadSuiteClient(path string, spec SuiteSpec) (*SuiteClientSettings, error) {
	base, err := LoadClient(path)
	if err != nil {
		return nil, err
	}
	f, _ := loadFields(path)
	s := &SuiteClientSettings{ClientSettings: base, Suite: spec.Name, Backends: map[string]BackendSettings{}}
	if s.ChildPidFile, err = f.path("childPidFile"); err != nil {
		return nil, err
	}
	if base.Transport == "http" {
		if s.ControlEndpoint, err = f.str("controlEndpoint"); err != nil {
			return nil, err
		}
	}
	if !spec.Uploads {
		return s, loadBackends(f, s)
	}
	up, err := f.section("upload", true)
	if err != nil {
		return nil, err
	}
	if s.Upload, err = ParseUploadRoute(up.data, path, "upload.", ""); err != nil {
		return nil, err
	}
	if s.Upload.TokenEnv == "" {
		return nil, up.err("auth", "is missing")
	}
	if n, ok := sdk.Integer(up.data["maxBytes"]); !ok || n < 0 {
		return nil, up.err("maxBytes", "must be a non-negative integer")
	}
	sources, ok := f.data["contentSources"].([]any)
	if !ok && !f.has("contentSources") && !spec.ContentSources {
		sources, ok = []any{}, true
	}
	if !ok {
		return nil, f.err("contentSources", "must be an array")
	}
	for i, item := range sources {
		where := fmt.Sprintf("contentSources[%d].", i)
		m, _ := item.(map[string]any)
		d, _ := sdk.Path(m, "descriptor").(map[string]any)
		ref, _ := d["ref"].(string)
		sha, _ := d["sha256"].(string)
		size, isInt := sdk.Integer(d["size"])
		text, isString := m["bytes"].(string)
		data, err := base64.StdEncoding.DecodeString(text)
		if ref == "" || !isInt || size < 0 || !sha256Pattern.MatchString(sha) || !isString || err != nil {
			return nil, &ConfigError{File: path, Field: where[:len(where)-1],
				Msg: "needs descriptor {ref, size, sha256} and base64 bytes"}
		}
		s.ContentSources = append(s.ContentSources, ContentSource{Ref: ref, SHA256: sha, Size: size, Data: data})
	}
	return s, loadBackends(f, s)
}

// loadBackends reads a client config's optional backends block into s.
func loadBackends(f fields, s *SuiteClientSettings) error {
	backends, err := f.section("backends", false)
	if err != nil || backends == nil {
		return err
	}
	for name := range backends.data {
		b, err := backends.section(name, true)
		if err != nil {
			return err
		}
		var bs BackendSettings
		if b.has("endpoint") {
			if bs.Endpoint, err = b.str("endpoint"); err != nil {
				return err
			}
		} else if bs.Command, err = b.command("command"); err != nil {
			return err
		}
		s.Backends[name] = bs
	}
	return nil
}

// HTTPTarget is what a client's HTTP exchanges need: the endpoint's TLS
// config, the bearer token (OAuth: fetched once), and, when no exchange can
// be had, why (broken).
type HTTPTarget struct {
	TLS    *tls.Config
	Token  string
	Broken string
}

// ClientHTTPTarget works out the credentials and trust for endpoint.
func ClientHTTPTarget(c *ClientSettings, endpoint string) (HTTPTarget, error) {
	a := c.Auth
	secure := strings.HasPrefix(InterceptURL(endpoint), "https://")
	if a.Profile == Strict && a.Mode != ModeNone && !secure {
		return HTTPTarget{Broken: fmt.Sprintf("profile strict refuses auth mode %s over plain HTTP", a.Mode)}, nil
	}
	if a.Mode == ModeMTLS && !secure {
		return HTTPTarget{Broken: "auth mode mtls needs an https endpoint"}, nil
	}
	var t HTTPTarget
	if secure || a.Mode == ModeOAuth {
		var err error
		if t.TLS, err = ClientTLS(a.TLS); err != nil {
			return t, &ConfigError{File: c.File, Field: a.TLS.Field, Msg: err.Error()}
		}
	}
	t.Token = a.Token
	if a.Mode == ModeOAuth {
		token, err := FetchToken(a, t.TLS, time.Duration(c.TimeoutMs)*time.Millisecond)
		if err != nil {
			return HTTPTarget{Broken: fmt.Sprintf("authentication failed: %v", err)}, nil
		}
		t.Token = token
	}
	return t, nil
}
