//! Config files (docs/CONTRACT.md): every problem names the file and the field.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ahp_sdk::auth::{Key, Verifier};
use serde_json::{Map, Value};

/// Reported unless the config names the manifest's language.
pub const DEFAULT_LANGUAGE: &str = "rust";

/// The config is unusable; its one line names the file and the field.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub file: String,
    pub field: String,
    pub msg: String,
}

impl ConfigError {
    pub fn new(file: &str, field: &str, msg: impl Into<String>) -> ConfigError {
        ConfigError {
            file: file.to_string(),
            field: field.to_string(),
            msg: msg.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.msg)
        } else {
            write!(f, "{}: field {}: {}", self.file, self.field, self.msg)
        }
    }
}

impl std::error::Error for ConfigError {}

type Result<T> = std::result::Result<T, ConfigError>;

/// Reads one strict JSON text from a file.
pub fn read_json(path: &Path) -> std::result::Result<Value, String> {
    let data = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    ahp_sdk::json::parse(&data).map_err(|e| format!("{} is not strict JSON: {e}", path.display()))
}

/// Typed access to one object of a config file.
#[derive(Clone)]
pub struct Fields {
    pub data: Map<String, Value>,
    pub file: String,
    pub prefix: String,
}

impl Fields {
    /// The whole file, which must hold a JSON object.
    pub fn load(path: &str) -> Result<Fields> {
        let v = read_json(Path::new(path)).map_err(|e| ConfigError::new(path, "", e))?;
        match v {
            Value::Object(data) => Ok(Fields {
                data,
                file: path.to_string(),
                prefix: String::new(),
            }),
            _ => Err(ConfigError::new(path, "", "must hold a JSON object")),
        }
    }

    pub fn err(&self, key: &str, msg: impl Into<String>) -> ConfigError {
        ConfigError::new(&self.file, &format!("{}{}", self.prefix, key), msg)
    }

    /// Present and not null.
    pub fn has(&self, key: &str) -> bool {
        !matches!(self.data.get(key), None | Some(Value::Null))
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.data.get(key).filter(|v| !v.is_null())
    }

    pub fn str(&self, key: &str) -> Result<String> {
        match self.get(key) {
            None => Err(self.err(key, "is missing")),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(_) => Err(self.err(key, "must be a non-empty string")),
        }
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<String>> {
        if self.has(key) {
            self.str(key).map(Some)
        } else {
            Ok(None)
        }
    }

    pub fn path(&self, key: &str) -> Result<String> {
        let s = self.str(key)?;
        if !s.starts_with('/') {
            return Err(self.err(key, "must be an absolute path"));
        }
        Ok(s)
    }

    pub fn opt_path(&self, key: &str) -> Result<Option<String>> {
        if self.has(key) {
            self.path(key).map(Some)
        } else {
            Ok(None)
        }
    }

    /// One of `choices`; `default` when absent (None: required).
    pub fn choice(&self, key: &str, default: Option<&str>, choices: &[&str]) -> Result<String> {
        let v = match self.get(key) {
            None => {
                return default
                    .map(str::to_string)
                    .ok_or_else(|| self.err(key, "is missing"));
            }
            Some(v) => v,
        };
        match v.as_str() {
            Some(s) if choices.contains(&s) => Ok(s.to_string()),
            _ => Err(self.err(
                key,
                format!(
                    "{} is not one of {}",
                    ahp_sdk::json::encode(v),
                    choices.join(", ")
                ),
            )),
        }
    }

    /// A non-empty array of non-empty strings.
    pub fn command(&self, key: &str) -> Result<Vec<String>> {
        let bad = || self.err(key, "must be a non-empty array of non-empty strings");
        let list = self.get(key).and_then(Value::as_array).ok_or_else(bad)?;
        if list.is_empty() {
            return Err(bad());
        }
        list.iter()
            .map(|item| match item.as_str() {
                Some(s) if !s.is_empty() => Ok(s.to_string()),
                _ => Err(bad()),
            })
            .collect()
    }

    /// A positive integer.
    pub fn positive_integer(&self, key: &str) -> Result<u64> {
        let v = self.get(key).ok_or_else(|| self.err(key, "is missing"))?;
        let n = v.as_u64().or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f < 9.007_199_254_740_992e15)
                .map(|f| f as u64)
        });
        match n {
            Some(n) if n >= 1 => Ok(n),
            _ => Err(self.err(key, "must be a positive integer")),
        }
    }

    /// A nested object (None when absent and not required).
    pub fn section(&self, key: &str, required: bool) -> Result<Option<Fields>> {
        match self.get(key) {
            None if required => Err(self.err(key, "is missing")),
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(Fields {
                data: m.clone(),
                file: self.file.clone(),
                prefix: format!("{}{}.", self.prefix, key),
            })),
            Some(_) => Err(self.err(key, "must be an object")),
        }
    }

    /// A scenario file: its path and rows.
    pub fn scenarios(&self, key: &str) -> Result<(String, Vec<Scenario>)> {
        let p = self.path(key)?;
        let rows = read_scenarios(Path::new(&p)).map_err(|e| self.err(key, e))?;
        Ok((p, rows))
    }
}

/// One row of a scenario file.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub id: String,
    pub raw: Map<String, Value>,
}

static NULL: Value = Value::Null;

impl Scenario {
    pub fn request(&self) -> &Value {
        self.raw.get("request").unwrap_or(&NULL)
    }
    pub fn response(&self) -> &Value {
        self.raw.get("response").unwrap_or(&NULL)
    }
    pub fn barrier(&self) -> Option<&str> {
        self.raw.get("barrier").and_then(Value::as_str)
    }
}

/// Reads the rows of a scenario file (each needs a non-empty string id).
pub fn read_scenarios(path: &Path) -> std::result::Result<Vec<Scenario>, String> {
    let v = read_json(path)?;
    let rows = crate::path(&v, &["scenarios"])
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{} has no scenarios array", path.display()))?;
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let m = row.as_object();
            match m.and_then(|m| m.get("id")).and_then(Value::as_str) {
                Some(id) if !id.is_empty() => Ok(Scenario {
                    id: id.to_string(),
                    raw: m.unwrap().clone(),
                }),
                _ => Err(format!(
                    "{}: scenarios[{i}] has no non-empty string id",
                    path.display()
                )),
            }
        })
        .collect()
}

// Auth modes and profiles.
pub const NONE: &str = "none";
pub const BEARER: &str = "bearer";
pub const OAUTH: &str = "oauth";
pub const MTLS: &str = "mtls";
pub const WORKLOAD: &str = "workload";
pub const STRICT: &str = "strict";
pub const COMPAT: &str = "compat";
const MODES: &[&str] = &[NONE, BEARER, OAUTH, MTLS, WORKLOAD];

/// Certificate material of one side.
#[derive(Debug, Clone, Default)]
pub struct TlsFiles {
    /// client: the trust anchor; server: the client-certificate CA (None: no client certificates)
    pub ca_file: Option<String>,
    pub cert_file: Option<String>,
    pub key_file: Option<String>,
    /// the config field the files came from (for errors): "tls" or "auth"
    pub field: String,
}

/// A server's policy and listener TLS.
pub struct ServerAuth {
    pub mode: String,
    pub profile: String,
    /// None in modes none and mtls: no Authorization check (TLS does the work in mtls)
    pub verifier: Option<Arc<Verifier>>,
    /// None: plain HTTP
    pub tls: Option<TlsFiles>,
}

/// What a client sends and trusts.
#[derive(Debug, Clone, Default)]
pub struct ClientAuth {
    pub mode: String,
    pub profile: String,
    /// the bearer token or the workload assertion
    pub token: Option<String>,
    pub token_endpoint: Option<String>,
    pub client_id: String,
    pub client_secret: String,
    pub audience: String,
    pub tls: TlsFiles,
}

fn mode_profile(f: &Fields) -> Result<(Fields, String, String)> {
    let auth = f.section("auth", true)?.expect("required");
    let mode = auth.choice("mode", None, MODES)?;
    let profile = auth.choice("profile", Some(STRICT), &[STRICT, COMPAT])?;
    Ok((auth, mode, profile))
}

fn compat_mtls(auth: &Fields) -> Result<TlsFiles> {
    Ok(TlsFiles {
        ca_file: Some(auth.path("caFile")?),
        cert_file: Some(auth.path("certFile")?),
        key_file: Some(auth.path("keyFile")?),
        field: "auth".into(),
    })
}

/// The verification time: the config's `clock` (Unix seconds), never the wall
/// clock unless the config has none.
fn clock(auth: &Fields) -> Result<i64> {
    match auth.get("clock") {
        None => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)),
        Some(v) => v
            .as_i64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.floor() as i64)
            })
            .ok_or_else(|| auth.err("clock", "must be a number")),
    }
}

fn server_auth(f: &Fields) -> Result<ServerAuth> {
    let (auth, mode, profile) = mode_profile(f)?;
    let tls = if profile == COMPAT && mode == MTLS {
        Some(compat_mtls(&auth)?)
    } else if let Some(sec) = f.section("tls", false)? {
        let files = TlsFiles {
            cert_file: Some(sec.path("certFile")?),
            key_file: Some(sec.path("keyFile")?),
            ca_file: sec.opt_path("clientCaFile")?,
            field: "tls".into(),
        };
        if mode == MTLS && files.ca_file.is_none() {
            return Err(sec.err("clientCaFile", "is needed for auth.mode mtls"));
        }
        Some(files)
    } else if profile == STRICT && mode != NONE {
        return Err(f.err(
            "tls",
            format!("is needed for auth.mode {mode} in profile strict"),
        ));
    } else {
        None
    };
    let verifier = match mode.as_str() {
        BEARER => Verifier::bearer(&auth.str("token")?),
        OAUTH | WORKLOAD => {
            let (key, key_field) = if profile == STRICT {
                let file = auth.path("publicKeyFile")?;
                let pem = std::fs::read(&file)
                    .map_err(|e| auth.err("publicKeyFile", format!("cannot read {file}: {e}")))?;
                (Key::Es256PublicPem(pem), "publicKeyFile")
            } else {
                (
                    Key::Hs256Secret(auth.str("signingKey")?.into_bytes()),
                    "signingKey",
                )
            };
            let issuer = auth.str("issuer")?;
            let audience = auth.str("audience")?;
            let purpose = auth.opt_str("purpose")?.unwrap_or_else(|| mode.clone());
            let clock = clock(&auth)?;
            Verifier::jwt(key, &issuer, &audience, &purpose, clock)
                .map_err(|e| auth.err(key_field, e))?
        }
        _ => {
            return Ok(ServerAuth {
                mode,
                profile,
                verifier: None,
                tls,
            })
        }
    };
    Ok(ServerAuth {
        mode,
        profile,
        verifier: Some(Arc::new(verifier)),
        tls,
    })
}

fn client_auth(f: &Fields) -> Result<ClientAuth> {
    let (auth, mode, profile) = mode_profile(f)?;
    let mut ca = ClientAuth {
        mode: mode.clone(),
        profile: profile.clone(),
        ..Default::default()
    };
    if profile == COMPAT && mode == MTLS {
        ca.tls = compat_mtls(&auth)?;
    } else {
        ca.tls.field = "tls".into();
        let sec = f.section("tls", false)?;
        if let Some(sec) = &sec {
            ca.tls.ca_file = Some(sec.path("caFile")?);
            ca.tls.cert_file = sec.opt_path("certFile")?;
            ca.tls.key_file = sec.opt_path("keyFile")?;
            if ca.tls.cert_file.is_some() != ca.tls.key_file.is_some() {
                let missing = if ca.tls.cert_file.is_none() {
                    "certFile"
                } else {
                    "keyFile"
                };
                return Err(sec.err(missing, "certFile and keyFile go together"));
            }
        }
        if mode == MTLS {
            match &sec {
                None => return Err(f.err("tls", "is needed for auth.mode mtls")),
                Some(sec) if ca.tls.cert_file.is_none() => {
                    return Err(sec.err("certFile", "is needed for auth.mode mtls"))
                }
                _ => {}
            }
        }
    }
    match mode.as_str() {
        BEARER => ca.token = Some(auth.str("token")?),
        WORKLOAD => ca.token = Some(auth.str("assertion")?),
        OAUTH => {
            ca.token_endpoint = Some(auth.str("tokenEndpoint")?);
            ca.client_id = auth.str("clientId")?;
            ca.client_secret = auth.str("clientSecret")?;
            ca.audience = auth.str("audience")?;
        }
        _ => {}
    }
    Ok(ca)
}

/// A server config.
pub struct ServerSettings {
    pub file: String,
    pub transport: String,
    pub readiness_file: String,
    pub scenario_file: String,
    pub scenarios: Vec<Scenario>,
    pub receipt_log: Option<String>,
    pub schema_dir: Option<String>,
    /// None over stdio (process trust)
    pub auth: Option<ServerAuth>,
}

/// A client config.
pub struct ClientSettings {
    pub file: String,
    pub transport: String,
    pub scenarios: Vec<Scenario>,
    pub report_file: String,
    pub timeout_ms: u64,
    pub auth: ClientAuth,
    pub endpoint: Option<String>,
    pub server_command: Vec<String>,
    pub server_cwd: Option<String>,
    pub server_config: Option<String>,
    pub schema_dir: Option<String>,
    pub language: String,
}

/// A replay config.
pub struct ReplaySettings {
    pub file: String,
    pub report_file: String,
    pub schema_dir: Option<String>,
    pub language: String,
    pub scenarios: Vec<Scenario>,
}

/// Reads a server config.
pub fn load_server(path: &str) -> Result<ServerSettings> {
    let f = Fields::load(path)?;
    let transport = f.choice("transport", None, &["http", "stdio"])?;
    let readiness_file = f.path("readinessFile")?;
    let (scenario_file, scenarios) = f.scenarios("scenarioFile")?;
    let receipt_log = f.opt_path("receiptLog")?;
    let schema_dir = f.opt_path("schemaDir")?;
    let auth = if transport == "http" {
        Some(server_auth(&f)?)
    } else {
        mode_profile(&f)?;
        None
    };
    Ok(ServerSettings {
        file: path.into(),
        transport,
        readiness_file,
        scenario_file,
        scenarios,
        receipt_log,
        schema_dir,
        auth,
    })
}

/// Reads a client config.
pub fn load_client(path: &str) -> Result<ClientSettings> {
    let f = Fields::load(path)?;
    let transport = f.choice("transport", None, &["http", "stdio"])?;
    let (_, scenarios) = f.scenarios("scenarioFile")?;
    let report_file = f.path("reportFile")?;
    let timeout_ms = f.positive_integer("timeoutMs")?;
    let schema_dir = f.opt_path("schemaDir")?;
    let language = f
        .opt_str("language")?
        .unwrap_or_else(|| DEFAULT_LANGUAGE.into());
    let auth = client_auth(&f)?;
    let mut c = ClientSettings {
        file: path.into(),
        transport,
        scenarios,
        report_file,
        timeout_ms,
        auth,
        endpoint: None,
        server_command: vec![],
        server_cwd: None,
        server_config: None,
        schema_dir,
        language,
    };
    if c.transport == "http" {
        let endpoint = f.str("endpoint")?;
        if crate::http::Url::parse(&endpoint).is_err() {
            return Err(f.err("endpoint", "must be an http(s) URL"));
        }
        c.endpoint = Some(endpoint);
    } else {
        c.server_command = f.command("serverCommand")?;
        c.server_cwd = Some(f.path("serverCwd")?);
        c.server_config = Some(f.path("serverConfig")?);
    }
    Ok(c)
}

/// Reads a replay config.
pub fn load_replay(path: &str) -> Result<ReplaySettings> {
    let f = Fields::load(path)?;
    let (_, scenarios) = f.scenarios("scenarioFile")?;
    let report_file = f.path("reportFile")?;
    let schema_dir = f.opt_path("schemaDir")?;
    let language = f
        .opt_str("language")?
        .unwrap_or_else(|| DEFAULT_LANGUAGE.into());
    Ok(ReplaySettings {
        file: path.into(),
        report_file,
        schema_dir,
        language,
        scenarios,
    })
}

/// Where the canonical schemas are: `schemaDir`, else `$AHP_SCHEMA_DIR`, else
/// `schemas/draft` of the checkout holding the executable.
pub fn schema_dir(configured: Option<&str>) -> PathBuf {
    if let Some(d) = configured {
        return PathBuf::from(d);
    }
    if let Ok(d) = std::env::var("AHP_SCHEMA_DIR") {
        if !d.is_empty() {
            return PathBuf::from(d);
        }
    }
    if let Ok(exe) = std::env::current_exe() {
        let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
        // adapters/rust/build/target/release/ahp-rust -> schemas/draft
        if let Some(root) = exe.ancestors().nth(6) {
            let candidate = root.join("schemas").join("draft");
            if candidate.is_dir() {
                return candidate;
            }
        }
    }
    PathBuf::from("../../schemas/draft") // the adapter directory is the cwd
}

/// Loads the canonical schemas; a failure is a problem of the config's schemaDir.
pub fn load_schemas(
    config_file: &str,
    configured: Option<&str>,
) -> Result<ahp_sdk::schemas::Schemas> {
    let dir = schema_dir(configured);
    ahp_sdk::schemas::Schemas::load(&dir)
        .map_err(|e| ConfigError::new(config_file, "schemaDir", format!("{}: {e}", dir.display())))
}
