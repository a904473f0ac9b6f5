//! Canonical schema validation (JSON Schema Draft 2020-12, with `boon`).
//!
//! [`Schemas::load`] reads every `*.schema.json` at the root of a directory
//! (strictly, with [`crate::json::parse`]) and registers each by its `$id`
//! (`https://interop.ahp.test/schemas/draft/<file>` when it has none). A
//! schema is compiled on its first use, once per process: [`Schemas::check`]
//! compiles exactly the schema it is asked for (a file, or one definition of
//! a file) with the `$ref`s it reaches, never a union of message schemas
//! (`schema.json`, "Any AHP wire message", is not a `*.schema.json` file and
//! is not loaded, as in the Go adapter).
//!
//! Format assertions are on, as in the Go adapter (`AssertFormat`, with the
//! same author's validator), the Python one (`uri` and `date-time` checked)
//! and the TypeScript one (`ajv-formats` for `uri` and `date-time`): the
//! canonical schemas use `uri` and `date-time`, and a value that is not one
//! fails the schema. The docs state nothing more on formats, except that the
//! elicitation suite's requested form schemas treat `format` as an annotation
//! (docs/ELICITATION.md), which is that suite's business, not this set's.

use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The base of every canonical `$id`.
pub const SCHEMA_BASE: &str = "https://interop.ahp.test/schemas/draft/";

pub const CAPABILITIES_REQUEST: &str = "capabilities-request.schema.json";
pub const CAPABILITIES_RESPONSE: &str = "capabilities-response.schema.json";
pub const CAPABILITIES: &str = "capabilities.schema.json";
pub const CATALOGUE_EVENT: &str = "catalogue-event.schema.json";
pub const COMMON: &str = "common.schema.json";
pub const CONTENT_ITEM: &str = "content-item.schema.json";
pub const CONTENT_REFERENCE: &str = "content-reference.schema.json";
pub const CONTENT_SELECTION: &str = "content-selection.schema.json";
pub const CONTENT_UPLOAD_RECEIPT: &str = "content-upload-receipt.schema.json";
pub const CONTENT_UPLOAD: &str = "content-upload.schema.json";
pub const DENY_EFFECT: &str = "deny-effect.schema.json";
pub const EFFECT: &str = "effect.schema.json";
pub const EVENT: &str = "event.schema.json";
pub const EXECUTION_EVENT: &str = "execution-event.schema.json";
pub const EXTENSIONS: &str = "extensions.schema.json";
pub const INTERACTION_EVENT: &str = "interaction-event.schema.json";
pub const INTERCEPT_DENY_RESPONSE: &str = "intercept-deny-response.schema.json";
pub const INTERCEPT_NO_EFFECT_RESPONSE: &str = "intercept-no-effect-response.schema.json";
pub const INTERCEPT_REQUEST: &str = "intercept-request.schema.json";
pub const INTERCEPT_RESPONSE: &str = "intercept-response.schema.json";
pub const JSON_RPC_MESSAGE: &str = "json-rpc-message.schema.json";
pub const MCP_ELICITATION: &str = "mcp-elicitation.schema.json";
pub const OBSERVE_NOTIFICATION: &str = "observe-notification.schema.json";
pub const REGISTRATION: &str = "registration.schema.json";
pub const SESSION_END: &str = "session-end.schema.json";
pub const SESSION_START: &str = "session-start.schema.json";
pub const STATE: &str = "state.schema.json";
pub const TASK_WORKSPACE_EVENT: &str = "task-workspace-event.schema.json";
pub const TOOL_AFTER: &str = "tool-after.schema.json";
pub const TOOL_BEFORE: &str = "tool-before.schema.json";

/// The elicitation suite's definitions (`file#pointer` names).
pub const ELICITATION_REQUEST_PARAMS: &str = "mcp-elicitation.schema.json#/$defs/requestParams";
pub const ELICITATION_RESULT: &str = "mcp-elicitation.schema.json#/$defs/result";

/// The longest problem text [`Schemas::check`] returns.
const MAX_PROBLEM: usize = 400;

/// One compiled schema: its own `boon` collection and the root's index.
struct Compiled {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

/// Every `*.schema.json` of one directory, each compiled once per process on
/// first use. `Send + Sync`: one instance serves every thread.
pub struct Schemas {
    /// (file name, `$id`, document), sorted by file name.
    documents: Vec<(String, String, Value)>,
    /// file name -> index in `documents`
    by_file: HashMap<String, usize>,
    /// name -> compiled schema, or why it does not compile
    compiled: Mutex<HashMap<String, Result<Arc<Compiled>, String>>>,
}

impl std::fmt::Debug for Schemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schemas")
            .field("files", &self.names())
            .finish_non_exhaustive()
    }
}

impl Schemas {
    /// Reads every `*.schema.json` at the root of `dir` (not its
    /// subdirectories). Each must be strict JSON holding an object; `$id`s
    /// must be distinct. Compiles nothing yet.
    pub fn load(dir: &Path) -> Result<Schemas, String> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| format!("schema directory {}: {e}", dir.display()))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("schema directory {}: {e}", dir.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_file =
                entry.file_type().map(|t| t.is_file()).unwrap_or(false) || entry.path().is_file();
            if is_file && name.ends_with(".schema.json") {
                names.push(name);
            }
        }
        if names.is_empty() {
            return Err(format!(
                "no *.schema.json files in the schema directory {}",
                dir.display()
            ));
        }
        names.sort();
        let mut documents = Vec::with_capacity(names.len());
        let mut by_file = HashMap::new();
        let mut ids: HashMap<String, String> = HashMap::new();
        for name in names {
            let path = dir.join(&name);
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let doc = crate::json::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            let Some(obj) = doc.as_object() else {
                return Err(format!("{} is not a schema object", path.display()));
            };
            let id = match obj.get("$id") {
                Some(Value::String(id)) if !id.is_empty() => id.clone(),
                None => format!("{SCHEMA_BASE}{name}"),
                Some(_) => {
                    return Err(format!("{}: $id is not a non-empty string", path.display()))
                }
            };
            if let Some(other) = ids.insert(id.clone(), name.clone()) {
                return Err(format!("{name} and {other} share the $id {id}"));
            }
            by_file.insert(name.clone(), documents.len());
            documents.push((name, id, doc));
        }
        Ok(Schemas {
            documents,
            by_file,
            compiled: Mutex::new(HashMap::new()),
        })
    }

    /// The schema files, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.documents.iter().map(|(n, _, _)| n.as_str()).collect()
    }

    /// Whether the directory holds the schema file (`name` without a pointer).
    pub fn has(&self, file: &str) -> bool {
        self.by_file.contains_key(file)
    }

    /// The `$id` a schema file is registered under.
    pub fn id_of(&self, file: &str) -> Option<&str> {
        self.by_file
            .get(file)
            .map(|&i| self.documents[i].1.as_str())
    }

    /// Compiles `name` (a file name, or `file#/json/pointer`) unless it
    /// already is; the error says why it cannot be.
    pub fn compile(&self, name: &str) -> Result<(), String> {
        self.compiled_schema(name).map(|_| ())
    }

    fn compiled_schema(&self, name: &str) -> Result<Arc<Compiled>, String> {
        let mut cache = self
            .compiled
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(found) = cache.get(name) {
            return found.clone();
        }
        let built = self.build(name);
        cache.insert(name.to_string(), built.clone());
        built
    }

    fn build(&self, name: &str) -> Result<Arc<Compiled>, String> {
        let (file, pointer) = match name.split_once('#') {
            Some((f, p)) => (f, Some(p)),
            None => (name, None),
        };
        let Some(&at) = self.by_file.get(file) else {
            return Err(format!("schema {file} not found"));
        };
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler.enable_format_assertions();
        // Every document is a resource, so any $ref between them resolves
        // without loading anything; only what `name` reaches is compiled.
        for (_, id, doc) in &self.documents {
            compiler
                .add_resource(id, doc.clone())
                .map_err(|e| format!("registering {id}: {e:#}"))?;
        }
        let mut location = self.documents[at].1.clone();
        if let Some(p) = pointer {
            location.push('#');
            location.push_str(p);
        }
        let mut schemas = boon::Schemas::new();
        let index = compiler
            .compile(&location, &mut schemas)
            .map_err(|e| format!("compiling {name}: {e:#}"))?;
        Ok(Arc::new(Compiled { schemas, index }))
    }

    /// Validates `v` against the named schema (a file name such as
    /// [`INTERCEPT_REQUEST`], or `file#/json/pointer`): None when valid, else
    /// a one-line problem (at most 400 characters) starting with the name.
    pub fn check(&self, name: &str, v: &Value) -> Option<String> {
        let compiled = match self.compiled_schema(name) {
            Ok(c) => c,
            Err(e) => return Some(e),
        };
        match compiled.schemas.validate(v, compiled.index) {
            Ok(()) => None,
            Err(e) => {
                let mut leaves = Vec::new();
                collect_leaves(&e, &mut leaves);
                Some(one_line(&format!("{name}: {}", leaves.join("; "))))
            }
        }
    }
}

/// The innermost failures of a validation error, `at '<pointer>': <what>`.
fn collect_leaves(e: &boon::ValidationError<'_, '_>, out: &mut Vec<String>) {
    if e.causes.is_empty() {
        out.push(format!("at '{}': {}", e.instance_location, e.kind));
    }
    for cause in &e.causes {
        collect_leaves(cause, out);
    }
}

/// Whitespace collapsed to single spaces, cut at [`MAX_PROBLEM`] characters.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(MAX_PROBLEM) {
        Some((cut, _)) => joined[..cut].to_string(),
        None => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn schemas_are_shared_between_threads() {
        assert_send_sync::<Schemas>();
    }

    #[test]
    fn problems_are_one_short_line() {
        let long = "a  b\n c ".repeat(200);
        let out = one_line(&long);
        assert!(!out.contains("  ") && !out.contains('\n'));
        assert_eq!(out.chars().count(), MAX_PROBLEM);
        assert_eq!(one_line("é x"), "é x");
    }
}
