// Package contract is docs/CONTRACT.md: configs, readiness, receipts, the
// control listener, transports, and authentication and TLS per mode.
package contract

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"ahp-interop/adapters/go/sdk"
)

// DefaultLanguage is reported unless the config names the manifest's.
const DefaultLanguage = "go"

// ConfigError: the config is unusable. Its one line names the file and the field.
type ConfigError struct {
	File, Field, Msg string
}

func (e *ConfigError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: field %s: %s", e.File, e.Field, e.Msg)
}

// IsConfigError reports whether err is (or wraps) a ConfigError.
func IsConfigError(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce)
}

// ReadJSON reads one strict JSON text from a file.
func ReadJSON(path string) (any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, err)
	}
	v, err := sdk.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not strict JSON: %v", path, err)
	}
	return v, nil
}

// fields gives typed access to one object of a config file.
type fields struct {
	data   map[string]any
	file   string
	prefix string
}

func (f fields) err(key, format string, args ...any) error {
	return &ConfigError{File: f.file, Field: f.prefix + key, Msg: fmt.Sprintf(format, args...)}
}

func (f fields) has(key string) bool { return f.data[key] != nil }

func (f fields) str(key string) (string, error) {
	v, ok := f.data[key]
	if !ok || v == nil {
		return "", f.err(key, "is missing")
	}
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", f.err(key, "must be a non-empty string")
	}
	return s, nil
}

func (f fields) optStr(key string) (string, error) {
	if !f.has(key) {
		return "", nil
	}
	return f.str(key)
}

func (f fields) path(key string) (string, error) {
	s, err := f.str(key)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(s) {
		return "", f.err(key, "must be an absolute path")
	}
	return s, nil
}

func (f fields) optPath(key string) (string, error) {
	if !f.has(key) {
		return "", nil
	}
	return f.path(key)
}

func (f fields) choice(key string, def string, choices ...string) (string, error) {
	v, ok := f.data[key]
	if !ok || v == nil {
		if def != "" {
			return def, nil
		}
		return "", f.err(key, "is missing")
	}
	s, _ := v.(string)
	for _, c := range choices {
		if s == c {
			return s, nil
		}
	}
	return "", f.err(key, "%s is not one of %s", sdk.EncodeString(v), strings.Join(choices, ", "))
}

func (f fields) command(key string) ([]string, error) {
	list, ok := f.data[key].([]any)
	if !ok || len(list) == 0 {
		return nil, f.err(key, "must be a non-empty array of non-empty strings")
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok || s == "" {
			return nil, f.err(key, "must be a non-empty array of non-empty strings")
		}
		out = append(out, s)
	}
	return out, nil
}

func (f fields) section(key string, required bool) (*fields, error) {
	v, ok := f.data[key]
	if !ok || v == nil {
		if required {
			return nil, f.err(key, "is missing")
		}
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, f.err(key, "must be an object")
	}
	return &fields{data: m, file: f.file, prefix: f.prefix + key + "."}, nil
}

func loadFields(path string) (fields, error) {
	v, err := ReadJSON(path)
	if err != nil {
		return fields{}, &ConfigError{File: path, Msg: err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fields{}, &ConfigError{File: path, Msg: "must hold a JSON object"}
	}
	return fields{data: m, file: path}, nil
}

// Scenario is one row of a scenario file.
type Scenario struct {
	ID  string
	Raw map[string]any
}

// Request, Response and Barrier of the row.
func (s Scenario) Request() any  { return s.Raw["request"] }
func (s Scenario) Response() any { return s.Raw["response"] }
func (s Scenario) Barrier() (string, bool) {
	b, ok := s.Raw["barrier"].(string)
	return b, ok
}

// ReadScenarios reads the rows of a scenario file.
func ReadScenarios(path string) ([]Scenario, error) {
	v, err := ReadJSON(path)
	if err != nil {
		return nil, err
	}
	rows, ok := sdk.Path(v, "scenarios").([]any)
	if !ok {
		return nil, fmt.Errorf("%s has no scenarios array", path)
	}
	out := make([]Scenario, 0, len(rows))
	for i, row := range rows {
		m, ok := row.(map[string]any)
		id, _ := sdk.Path(m, "id").(string)
		if !ok || id == "" {
			return nil, fmt.Errorf("%s: scenarios[%d] has no non-empty string id", path, i)
		}
		out = append(out, Scenario{ID: id, Raw: m})
	}
	return out, nil
}

func (f fields) scenarios(key string) (string, []Scenario, error) {
	p, err := f.path(key)
	if err != nil {
		return "", nil, err
	}
	rows, err := ReadScenarios(p)
	if err != nil {
		return "", nil, f.err(key, "%v", err)
	}
	return p, rows, nil
}

// Auth modes and profiles.
const (
	ModeNone     = "none"
	ModeBearer   = "bearer"
	ModeOAuth    = "oauth"
	ModeMTLS     = "mtls"
	ModeWorkload = "workload"
	Strict       = "strict"
	Compat       = "compat"
)

// TLSFiles is certificate material for one side.
type TLSFiles struct {
	CAFile   string // client: the trust anchor; server: the client-certificate CA ("" none)
	CertFile string
	KeyFile  string
	Field    string // the config field the files came from (for errors)
}

// ServerAuth is a server's policy and listener TLS.
type ServerAuth struct {
	Mode, Profile string
	Policy        sdk.ServerPolicy
	TLS           *TLSFiles // nil: plain HTTP
}

// ClientAuth is what a client sends and trusts.
type ClientAuth struct {
	Mode, Profile string
	Token         string // bearer token or workload assertion
	TokenEndpoint string
	ClientID      string
	ClientSecret  string
	Audience      string
	TLS           TLSFiles
}

func modeProfile(f fields) (*fields, string, string, error) {
	auth, err := f.section("auth", true)
	if err != nil {
		return nil, "", "", err
	}
	mode, err := auth.choice("mode", "", ModeNone, ModeBearer, ModeOAuth, ModeMTLS, ModeWorkload)
	if err != nil {
		return nil, "", "", err
	}
	profile, err := auth.choice("profile", Strict, Strict, Compat)
	if err != nil {
		return nil, "", "", err
	}
	return auth, mode, profile, nil
}

func compatMTLS(auth *fields) (TLSFiles, error) {
	var t TLSFiles
	var err error
	t.Field = "auth"
	if t.CAFile, err = auth.path("caFile"); err != nil {
		return t, err
	}
	if t.CertFile, err = auth.path("certFile"); err != nil {
		return t, err
	}
	t.KeyFile, err = auth.path("keyFile")
	return t, err
}

func serverAuth(f fields) (*ServerAuth, error) {
	auth, mode, profile, err := modeProfile(f)
	if err != nil {
		return nil, err
	}
	sa := &ServerAuth{Mode: mode, Profile: profile, Policy: sdk.ServerPolicy{Mode: mode}}
	// TLS
	if profile == Compat && mode == ModeMTLS {
		files, err := compatMTLS(auth)
		if err != nil {
			return nil, err
		}
		sa.TLS = &files
	} else if sec, err := f.section("tls", false); err != nil {
		return nil, err
	} else if sec != nil {
		files := TLSFiles{Field: "tls"}
		if files.CertFile, err = sec.path("certFile"); err != nil {
			return nil, err
		}
		if files.KeyFile, err = sec.path("keyFile"); err != nil {
			return nil, err
		}
		if files.CAFile, err = sec.optPath("clientCaFile"); err != nil {
			return nil, err
		}
		if mode == ModeMTLS && files.CAFile == "" {
			return nil, sec.err("clientCaFile", "is needed for auth.mode mtls")
		}
		sa.TLS = &files
	} else if profile == Strict && mode != ModeNone {
		return nil, f.err("tls", "is needed for auth.mode %s in profile strict", mode)
	}
	// Authorization policy
	switch mode {
	case ModeBearer:
		if sa.Policy.Token, err = auth.str("token"); err != nil {
			return nil, err
		}
	case ModeOAuth, ModeWorkload:
		p := &sa.Policy
		if profile == Strict {
			keyFile, err := auth.path("publicKeyFile")
			if err != nil {
				return nil, err
			}
			data, err := os.ReadFile(keyFile)
			if err != nil {
				return nil, auth.err("publicKeyFile", "cannot read: %v", err)
			}
			if p.PublicKey, err = sdk.ParseP256PublicKey(data); err != nil {
				return nil, auth.err("publicKeyFile", "%v", err)
			}
			p.Algorithm = "ES256"
		} else {
			secret, err := auth.str("signingKey")
			if err != nil {
				return nil, err
			}
			p.Secret = []byte(secret)
			p.Algorithm = "HS256"
		}
		if p.Issuer, err = auth.str("issuer"); err != nil {
			return nil, err
		}
		if p.Audience, err = auth.str("audience"); err != nil {
			return nil, err
		}
		p.Purpose = mode
		if auth.has("purpose") {
			if p.Purpose, err = auth.str("purpose"); err != nil {
				return nil, err
			}
		}
		if auth.has("clock") {
			c := auth.data["clock"]
			if !sdk.IsNumber(c) {
				return nil, auth.err("clock", "must be a number")
			}
			p.Clock = c
		}
	}
	return sa, nil
}

func clientAuth(f fields) (*ClientAuth, error) {
	auth, mode, profile, err := modeProfile(f)
	if err != nil {
		return nil, err
	}
	ca := &ClientAuth{Mode: mode, Profile: profile}
	if profile == Compat && mode == ModeMTLS {
		if ca.TLS, err = compatMTLS(auth); err != nil {
			return nil, err
		}
	} else {
		sec, err := f.section("tls", false)
		if err != nil {
			return nil, err
		}
		ca.TLS.Field = "tls"
		if sec != nil {
			if ca.TLS.CAFile, err = sec.path("caFile"); err != nil {
				return nil, err
			}
			if ca.TLS.CertFile, err = sec.optPath("certFile"); err != nil {
				return nil, err
			}
			if ca.TLS.KeyFile, err = sec.optPath("keyFile"); err != nil {
				return nil, err
			}
			if (ca.TLS.CertFile == "") != (ca.TLS.KeyFile == "") {
				return nil, sec.err("keyFile", "certFile and keyFile go together")
			}
		}
		if mode == ModeMTLS {
			if sec == nil {
				return nil, f.err("tls", "is needed for auth.mode mtls")
			}
			if ca.TLS.CertFile == "" {
				return nil, sec.err("certFile", "is needed for auth.mode mtls")
			}
		}
	}
	switch mode {
	case ModeBearer:
		ca.Token, err = auth.str("token")
	case ModeWorkload:
		ca.Token, err = auth.str("assertion")
	case ModeOAuth:
		if ca.TokenEndpoint, err = auth.str("tokenEndpoint"); err != nil {
			return nil, err
		}
		if ca.ClientID, err = auth.str("clientId"); err != nil {
			return nil, err
		}
		if ca.ClientSecret, err = auth.str("clientSecret"); err != nil {
			return nil, err
		}
		ca.Audience, err = auth.str("audience")
	}
	if err != nil {
		return nil, err
	}
	return ca, nil
}

// ServerSettings is a server config.
type ServerSettings struct {
	File          string
	Transport     string
	ReadinessFile string
	ScenarioFile  string
	Scenarios     []Scenario
	ReceiptLog    string
	SchemaDir     string
	Auth          *ServerAuth // nil over stdio (process trust)
}

// ClientSettings is a client config.
type ClientSettings struct {
	File          string
	Transport     string
	Scenarios     []Scenario
	ReportFile    string
	TimeoutMs     int64
	Auth          *ClientAuth
	Endpoint      string
	ServerCommand []string
	ServerCwd     string
	ServerConfig  string
	SchemaDir     string
	Language      string
}

// ReplaySettings is a replay config.
type ReplaySettings struct {
	File, ReportFile, SchemaDir, Language string
	Scenarios                             []Scenario
}

// LoadServer reads a server config.
func LoadServer(path string) (*ServerSettings, error) {
	f, err := loadFields(path)
	if err != nil {
		return nil, err
	}
	s := &ServerSettings{File: path}
	if s.Transport, err = f.choice("transport", "", "http", "stdio"); err != nil {
		return nil, err
	}
	if s.ReadinessFile, err = f.path("readinessFile"); err != nil {
		return nil, err
	}
	if s.ScenarioFile, s.Scenarios, err = f.scenarios("scenarioFile"); err != nil {
		return nil, err
	}
	if s.ReceiptLog, err = f.optPath("receiptLog"); err != nil {
		return nil, err
	}
	if s.SchemaDir, err = f.optPath("schemaDir"); err != nil {
		return nil, err
	}
	if s.Transport == "http" {
		if s.Auth, err = serverAuth(f); err != nil {
			return nil, err
		}
	} else if _, _, _, err = modeProfile(f); err != nil {
		return nil, err
	}
	return s, nil
}

// LoadClient reads a client config.
func LoadClient(path string) (*ClientSettings, error) {
	f, err := loadFields(path)
	if err != nil {
		return nil, err
	}
	c := &ClientSettings{File: path}
	if c.Transport, err = f.choice("transport", "", "http", "stdio"); err != nil {
		return nil, err
	}
	if _, c.Scenarios, err = f.scenarios("scenarioFile"); err != nil {
		return nil, err
	}
	if c.ReportFile, err = f.path("reportFile"); err != nil {
		return nil, err
	}
	t, ok := sdk.Integer(f.data["timeoutMs"])
	if !ok || t < 1 {
		return nil, f.err("timeoutMs", "must be a positive integer")
	}
	c.TimeoutMs = t
	if c.SchemaDir, err = f.optPath("schemaDir"); err != nil {
		return nil, err
	}
	if c.Language, err = f.optStr("language"); err != nil {
		return nil, err
	}
	if c.Language == "" {
		c.Language = DefaultLanguage
	}
	if c.Auth, err = clientAuth(f); err != nil {
		return nil, err
	}
	if c.Transport == "http" {
		if c.Endpoint, err = f.str("endpoint"); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://") {
			return nil, f.err("endpoint", "must be an http(s) URL")
		}
	} else {
		if c.ServerCommand, err = f.command("serverCommand"); err != nil {
			return nil, err
		}
		if c.ServerCwd, err = f.path("serverCwd"); err != nil {
			return nil, err
		}
		if c.ServerConfig, err = f.path("serverConfig"); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// LoadReplay reads a replay config.
func LoadReplay(path string) (*ReplaySettings, error) {
	f, err := loadFields(path)
	if err != nil {
		return nil, err
	}
	r := &ReplaySettings{File: path}
	if _, r.Scenarios, err = f.scenarios("scenarioFile"); err != nil {
		return nil, err
	}
	if r.ReportFile, err = f.path("reportFile"); err != nil {
		return nil, err
	}
	if r.SchemaDir, err = f.optPath("schemaDir"); err != nil {
		return nil, err
	}
	if r.Language, err = f.optStr("language"); err != nil {
		return nil, err
	}
	if r.Language == "" {
		r.Language = DefaultLanguage
	}
	return r, nil
}

// LoadSchemas opens the canonical schemas: schemaDir, else $AHP_SCHEMA_DIR,
// else schemas/draft of the checkout holding the executable. A failure is a
// problem of the config's schemaDir.
func LoadSchemas(configFile, schemaDir string) (*sdk.Schemas, error) {
	dir := schemaDir
	if dir == "" {
		dir = os.Getenv("AHP_SCHEMA_DIR")
	}
	if dir == "" {
		dir = defaultSchemaDir()
	}
	s, err := sdk.LoadSchemas(os.DirFS(dir))
	if err != nil {
		return nil, &ConfigError{File: configFile, Field: "schemaDir", Msg: fmt.Sprintf("%s: %v", dir, err)}
	}
	return s, nil
}

func defaultSchemaDir() string {
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		// adapters/go/build/ahp-go -> schemas/draft
		candidate := filepath.Join(filepath.Dir(exe), "..", "..", "..", "schemas", "draft")
		if st, err := os.Stat(candidate); err == nil && st.IsDir() {
			return candidate
		}
	}
	return filepath.Join("..", "..", "schemas", "draft") // the adapter directory is the cwd
}
