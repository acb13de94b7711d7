//! `[key] reads`: the fixed variable a CLI reads the API key from, for
//! every API (`reads = "ANTHROPIC_API_KEY"`, Claude Code) or per API
//! (`reads = { chat = "OPENAI_API_KEY", anthropic = "ANTHROPIC_API_KEY" }`,
//! Qwen Code and Cline, whose variable follows the API in use). Another
//! `--api-key-env` is copied into it by the runner's setup, by name; an
//! API left out of the table has no fixed variable (the CLI is given
//! `--api-key-env` itself, through its config or argv).

use super::{Api, SpecError, Table, err};

/// Where the CLI reads the key from, per API.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyReads {
    /// One variable for every API (`reads = "NAME"`).
    all: Option<String>,
    /// Per API (`reads = { API = "NAME", … }`), in the spec's API order.
    per_api: Vec<(Api, String)>,
}

impl KeyReads {
    /// The variable the CLI reads the key from when it speaks `api`.
    pub fn for_api(&self, api: Api) -> Option<&str> {
        self.all.as_deref().or_else(|| {
            self.per_api
                .iter()
                .find(|(a, _)| *a == api)
                .map(|(_, n)| n.as_str())
        })
    }
}

/// A variable the session may copy the key into.
fn check_name(field: &str, name: &str) -> Result<(), SpecError> {
    if crate::names::VarName::new(name).is_err() || name.starts_with("RUNNER_") {
        return Err(err(
            field,
            format!("{name:?} is not a variable name outside RUNNER_*"),
        ));
    }
    Ok(())
}

/// Read `[key]` (absent: no fixed variable for any API).
pub(super) fn key_reads_of(t: &mut Table<'_>, apis: &[Api]) -> Result<KeyReads, SpecError> {
    let Some(mut k) = t.opt_table("key")? else {
        return Ok(KeyReads::default());
    };
    let field = k.field("reads");
    let reads = match k.get("reads") {
        None => KeyReads::default(),
        Some(toml::Value::String(name)) => {
            check_name(&field, name)?;
            KeyReads {
                all: Some(name.clone()),
                per_api: Vec::new(),
            }
        }
        Some(toml::Value::Table(per)) => {
            let mut per_api = Vec::new();
            for (api_name, v) in per {
                let f = format!("{field}.{api_name}");
                let api: Api = api_name.parse().map_err(|_| {
                    err(
                        &f,
                        format!("{api_name:?} is not an API (chat, responses, anthropic, gemini)"),
                    )
                })?;
                if !apis.contains(&api) {
                    return Err(err(&f, format!("{api} is not one of the spec's apis")));
                }
                let toml::Value::String(name) = v else {
                    return Err(err(&f, format!("must be a string, not {}", v.type_str())));
                };
                check_name(&f, name)?;
                per_api.push((api, name.clone()));
            }
            per_api.sort_by_key(|(a, _)| apis.iter().position(|x| x == a));
            KeyReads { all: None, per_api }
        }
        Some(v) => {
            return Err(err(
                &field,
                format!(
                    "must be a variable name or a table of them per API, not {}",
                    v.type_str()
                ),
            ));
        }
    };
    k.done()?;
    Ok(reads)
}
