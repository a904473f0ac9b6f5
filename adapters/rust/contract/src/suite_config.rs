//! The configs of the suites past core (docs/CONTRACT.md, "One command pair
//! for every suite past core"; docs/LIFECYCLE.md): the core keys, `suite`,
//! and what a suite adds (upload credentials and blocks, content sources,
//! the control endpoint, other backends). Generic over the suite: a
//! [`SuiteSpec`] says which of the blocks a suite's configs carry.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::{self, ClientSettings, ConfigError, Fields, Scenario, ServerSettings};
use crate::upload::{base64_decode, is_sha256_hex, random_token};

type Result<T> = std::result::Result<T, ConfigError>;

// The suites that run through the lifecycle commands.
pub const LIFECYCLE: &str = "lifecycle";
pub const CATALOGUE: &str = "catalogue";
pub const COMPACTION: &str = "compaction";
pub const ELICITATION: &str = "elicitation";

/// The reserved backend name a client config's `backends` defines (docs/LIFECYCLE.md [ext]).
pub const UNREACHABLE: &str = "unreachable";

/// What one suite's configs carry beyond the common keys (its schemas in
/// `schemas/contract/<suite>-{client,server}-config.schema.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuiteSpec {
    /// the config's `suite`
    pub name: &'static str,
    /// the server config must carry `uploadAuth` (else it may; without it
    /// the upload token is a random one nobody holds)
    pub upload_auth: bool,
    /// the client config must carry an `upload` block (else it may)
    pub upload: bool,
    /// the client config must carry `contentSources` (else it may; default `[]`)
    pub content_sources: bool,
}

/// The config's `suite` (a ConfigError when the file is unusable or the
/// field is not a non-empty string).
pub fn suite_of(path: &str) -> Result<String> {
    Fields::load(path)?.str("suite")
}

/// The spec of the config's suite; a suite not among `specs` is a
/// ConfigError naming the `suite` field (a server exits 2 with it).
pub fn require_suite<'a>(path: &str, specs: &'a [SuiteSpec]) -> Result<&'a SuiteSpec> {
    let name = suite_of(path)?;
    specs.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        ConfigError::new(
            path,
            "suite",
            format!(
                "{} is not implemented by ahp-rust (it implements {})",
                ahp_sdk::json::encode(&Value::String(name)),
                names.join(", ")
            ),
        )
    })
}

/// A suite server's config: the core server config, the suite, the upload token.
pub struct SuiteServerSettings {
    pub base: ServerSettings,
    pub suite: String,
    /// `uploadAuth.token`: the one credential the upload listener accepts
    pub upload_token: String,
}

/// Reads a suite server's config (`spec` is its suite's, from [`require_suite`]).
pub fn load_suite_server(path: &str, spec: &SuiteSpec) -> Result<SuiteServerSettings> {
    let base = config::load_server(path)?;
    let f = Fields::load(path)?;
    let upload_token = match f.section("uploadAuth", spec.upload_auth)? {
        Some(up) => up.str("token")?,
        None => random_token(),
    };
    Ok(SuiteServerSettings {
        base,
        suite: spec.name.to_string(),
        upload_token,
    })
}

/// Where one upload goes and with what.
#[derive(Debug, Clone, PartialEq)]
pub struct UploadRoute {
    /// None: the server's (the config's `upload.endpoint`, else the readiness file's `uploadEndpoint`)
    pub endpoint: Option<String>,
    /// the environment variable holding the bearer token; None: no credential at all
    pub token_env: Option<String>,
    pub timeout: Duration,
    /// the CA verifying an https endpoint **[ext]**
    pub ca_file: Option<String>,
    pub max_bytes: Option<u64>,
}

fn non_negative(f: &Fields, key: &str) -> Result<Option<u64>> {
    match f.get(key) {
        None => Ok(None),
        Some(v) => match ahp_sdk::json::integer_value(v) {
            Some(n) if n >= 0 && n <= u64::MAX as i128 => Ok(Some(n as u64)),
            _ => Err(f.err(key, "must be a non-negative integer")),
        },
    }
}

/// Reads an upload block (the config's, or a step's whose endpoint defaults
/// to `default_endpoint`). A block without `auth` uploads with no
/// credential; its `tls.caFile` verifies an https endpoint.
pub fn parse_upload_route(f: &Fields, default_endpoint: Option<&str>) -> Result<UploadRoute> {
    let endpoint = f
        .opt_str("endpoint")?
        .or_else(|| default_endpoint.map(str::to_string));
    if let Some(e) = &endpoint {
        if crate::http::Url::parse(e).is_err() {
            return Err(f.err("endpoint", "must be an http(s) URL"));
        }
    }
    let timeout = Duration::from_millis(f.positive_integer("timeoutMs")?);
    let token_env = match f.section("auth", false)? {
        Some(auth) => {
            auth.choice("type", None, &["bearer"])?;
            Some(auth.str("tokenEnv")?)
        }
        None => None,
    };
    let ca_file = match f.section("tls", false)? {
        Some(sec) => Some(sec.path("caFile")?),
        None => None,
    };
    let max_bytes = non_negative(f, "maxBytes")?;
    Ok(UploadRoute {
        endpoint,
        token_env,
        timeout,
        ca_file,
        max_bytes,
    })
}

/// A step's own upload block: it replaces the config's wholesale (its
/// endpoint defaults to the config's; no `auth`: no credential; no
/// `timeoutMs`: the config's). Errors name the scenario.
pub fn step_upload_route(
    block: &Value,
    scenario: &str,
    config: &UploadRoute,
) -> Result<UploadRoute> {
    let mut data = block.as_object().cloned().ok_or_else(|| {
        ConfigError::new(
            &format!("scenario {scenario}"),
            "upload",
            "must be an object",
        )
    })?;
    if !data.contains_key("timeoutMs") {
        data.insert(
            "timeoutMs".into(),
            Value::from(config.timeout.as_millis() as u64),
        );
    }
    let f = Fields {
        data,
        file: format!("scenario {scenario}"),
        prefix: "upload.".into(),
    };
    parse_upload_route(&f, config.endpoint.as_deref())
}

/// A descriptor with its bytes (the config's `contentSources`).
#[derive(Debug, Clone, PartialEq)]
pub struct ContentSource {
    pub reference: String,
    pub size: u64,
    pub sha256: String,
    pub data: Vec<u8>,
}

/// A backend other than the run's server (the config's `backends`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BackendSettings {
    /// over HTTP
    pub endpoint: Option<String>,
    /// over stdio
    pub command: Vec<String>,
}

/// A suite client's config: the core client config and the suite's blocks.
pub struct SuiteClientSettings {
    pub base: ClientSettings,
    pub suite: String,
    pub child_pid_file: String,
    /// over HTTP (over stdio it comes from the spawned server's readiness file)
    pub control_endpoint: Option<String>,
    /// the config's upload block (None for a suite without uploads that has none)
    pub upload: Option<UploadRoute>,
    pub content_sources: Vec<ContentSource>,
    pub backends: BTreeMap<String, BackendSettings>,
}

impl SuiteClientSettings {
    /// The config's `timeoutMs`.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.base.timeout_ms)
    }
}

/// A client config of a suite the binary does not implement: enough to
/// report every row `unsupported`, naming it.
pub struct OtherSuite {
    pub file: String,
    pub suite: String,
    pub scenarios: Vec<Scenario>,
    pub report_file: String,
    pub language: String,
}

/// What [`load_suite_client`] read.
pub enum SuiteClientConfig {
    Implemented(Box<SuiteClientSettings>),
    Other(OtherSuite),
}

/// Reads a suite client's config; a suite not among `specs` gives `Other`.
pub fn load_suite_client(path: &str, specs: &[SuiteSpec]) -> Result<SuiteClientConfig> {
    let f = Fields::load(path)?;
    let suite = f.str("suite")?;
    let Some(spec) = specs.iter().find(|s| s.name == suite) else {
        let (_, scenarios) = f.scenarios("scenarioFile")?;
        return Ok(SuiteClientConfig::Other(OtherSuite {
            file: path.into(),
            suite,
            scenarios,
            report_file: f.path("reportFile")?,
            language: f
                .opt_str("language")?
                .unwrap_or_else(|| config::DEFAULT_LANGUAGE.into()),
        }));
    };
    let base = config::load_client(path)?;
    let child_pid_file = f.path("childPidFile")?;
    let control_endpoint = if base.transport == "http" {
        let c = f.str("controlEndpoint")?;
        if crate::http::Url::parse(&c).is_err() {
            return Err(f.err("controlEndpoint", "must be an http URL"));
        }
        Some(c)
    } else {
        None
    };
    let upload = match f.section("upload", spec.upload)? {
        Some(up) => {
            let route = parse_upload_route(&up, None)?;
            if route.token_env.is_none() {
                return Err(up.err("auth", "is missing"));
            }
            if route.max_bytes.is_none() {
                return Err(up.err("maxBytes", "is missing"));
            }
            Some(route)
        }
        None => None,
    };
    let content_sources = content_sources(&f, spec.content_sources)?;
    let backends = backends(&f)?;
    Ok(SuiteClientConfig::Implemented(Box::new(
        SuiteClientSettings {
            base,
            suite,
            child_pid_file,
            control_endpoint,
            upload,
            content_sources,
            backends,
        },
    )))
}

fn content_sources(f: &Fields, required: bool) -> Result<Vec<ContentSource>> {
    let list = match f.get("contentSources") {
        None if required => return Err(f.err("contentSources", "is missing")),
        None => return Ok(vec![]),
        Some(Value::Array(l)) => l,
        Some(_) => return Err(f.err("contentSources", "must be an array")),
    };
    let mut out = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let bad = || {
            f.err(
                &format!("contentSources[{i}]"),
                "needs descriptor {ref, size, sha256} and base64 bytes",
            )
        };
        let d = item
            .get("descriptor")
            .and_then(Value::as_object)
            .ok_or_else(bad)?;
        let reference = d
            .get("ref")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty());
        let size = d.get("size").and_then(Value::as_u64);
        let sha = d
            .get("sha256")
            .and_then(Value::as_str)
            .filter(|s| is_sha256_hex(s));
        let data = item
            .get("bytes")
            .and_then(Value::as_str)
            .and_then(|b| base64_decode(b).ok());
        match (reference, size, sha, data) {
            (Some(r), Some(size), Some(sha), Some(data)) => out.push(ContentSource {
                reference: r.to_string(),
                size,
                sha256: sha.to_string(),
                data,
            }),
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

fn backends(f: &Fields) -> Result<BTreeMap<String, BackendSettings>> {
    let mut out = BTreeMap::new();
    let Some(sec) = f.section("backends", false)? else {
        return Ok(out);
    };
    let names: Vec<String> = sec.data.keys().cloned().collect();
    for name in names {
        let b = sec.section(&name, true)?.expect("required");
        let settings = if b.has("endpoint") {
            let e = b.str("endpoint")?;
            if crate::http::Url::parse(&e).is_err() {
                return Err(b.err("endpoint", "must be an http(s) URL"));
            }
            BackendSettings {
                endpoint: Some(e),
                command: vec![],
            }
        } else {
            BackendSettings {
                endpoint: None,
                command: b.command("command")?,
            }
        };
        out.insert(name, settings);
    }
    Ok(out)
}

/// A JSON object's fields as config fields (a scenario's block, say).
pub fn fields_of(v: &Map<String, Value>, file: &str, prefix: &str) -> Fields {
    Fields {
        data: v.clone(),
        file: file.into(),
        prefix: prefix.into(),
    }
}
