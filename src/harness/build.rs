//! Building a session from a spec: the inputs checked, the spec's profile
//! filled in for them, the common session assembled around it, and the
//! session written on the host.

use super::runtime;
use super::*;

/// What a spec adds to the common session, filled in.
struct Profile {
    /// argv after the entry program.
    args: Vec<String>,
    /// Extra environment for the CLI.
    env: Vec<(String, String)>,
    /// How the prompt reaches the CLI: stdin, argv naming `prompt.txt`, or
    /// its content as the last argv word.
    prompt: spec::PromptVia,
    /// Config and other files.
    files: Vec<SessionFile>,
    /// Extra empty directories.
    dirs: Vec<String>,
    /// Session data.
    capture: Capture,
    /// Setup code for the runner, if any.
    setup: Option<Raw>,
}

/// The inputs a profile sees, checked.
struct Ctx<'a> {
    spec: &'a SessionSpec,
    def: &'a HarnessDef,
    api: Api,
    key_env: &'a str,
    layout: Layout,
}

/// Fill the spec in for these inputs.
fn profile(ctx: &Ctx<'_>) -> Result<Profile, HarnessError> {
    let (def, spec, l) = (ctx.def, ctx.spec, &ctx.layout);
    let per_api = def
        .api_profile(ctx.api)
        .expect("checked: the API is one of the spec's");
    let vals = format::Values {
        model: &spec.model,
        base_url: format!("{}{}", spec.base_url, per_api.url_path),
        key_env: ctx.key_env,
        session: &spec.session_dir,
        workdir: &spec.workdir,
        prompt_file: l.path("prompt.txt"),
        api_values: &per_api.values,
    };
    let argv = per_api
        .args
        .as_ref()
        .or_else(|| {
            def.mode_args
                .iter()
                .find(|(m, _)| *m == spec.mode)
                .map(|(_, a)| a)
        })
        .unwrap_or(&def.args);
    let env = def
        .env
        .iter()
        .chain(&per_api.env)
        .map(|(n, t)| (n.clone(), vals.fill(t)))
        .collect();
    let files = def
        .files
        .iter()
        .map(|f| {
            Ok(SessionFile {
                path: f.path.clone(),
                content: f.format.render(&f.content, &vals)?.into_bytes(),
            })
        })
        .collect::<Result<Vec<_>, HarnessError>>()?;
    let at = l.path(&def.capture.path);
    let capture = Capture {
        harness: def.name.clone(),
        kind: def.capture.reader.clone(),
        db: (def.capture.source == spec::CaptureSource::Db).then(|| at.clone()),
        dir: (def.capture.source == spec::CaptureSource::Dir).then_some(at),
    };
    Ok(Profile {
        args: argv.iter().map(|t| vals.fill(t)).collect(),
        env,
        prompt: def.prompt,
        files,
        dirs: def.dirs.clone(),
        capture,
        setup: def
            .key_reads
            .for_api(ctx.api)
            .filter(|r| *r != ctx.key_env)
            .map(|r| copy_key(ctx.key_env, r)),
    })
}

/// Setup code exporting `reads` from the variable named `key_env`: the
/// code holds both names (checked variable names), never the value.
fn copy_key(key_env: &str, reads: &str) -> Raw {
    let mut code = Raw::code("shforge_key_var=");
    code.push_word(&quote(key_env).expect("a checked variable name quotes"));
    code.push_code("\nif [[ -n ${!shforge_key_var+set} ]]; then export ");
    code.push_word(&quote(reads).expect("a checked variable name quotes"));
    code.push_code("=\"${!shforge_key_var}\"; fi\nunset shforge_key_var");
    code
}

fn check_abs(what: &'static str, value: &str) -> Result<(), HarnessError> {
    if !value.starts_with('/') {
        return Err(HarnessError::NotAbsolute {
            what,
            value: value.into(),
        });
    }
    if value.contains('\0') {
        return Err(HarnessError::Invalid {
            what,
            why: "contains a NUL byte".into(),
        });
    }
    if value.split('/').any(|c| c == "..") {
        return Err(HarnessError::Invalid {
            what,
            why: format!("{value:?} has a .. component (give the path itself)"),
        });
    }
    Ok(())
}

fn check_text(what: &'static str, value: &str) -> Result<(), HarnessError> {
    if value.is_empty() {
        return Err(HarnessError::Invalid {
            what,
            why: "is empty".into(),
        });
    }
    if value.contains('\0') {
        return Err(HarnessError::Invalid {
            what,
            why: "contains a NUL byte".into(),
        });
    }
    Ok(())
}

/// `/a/b/` → `/a/b`; `/` stays.
fn trim_slash(p: &str) -> String {
    let t = p.trim_end_matches('/');
    if t.is_empty() { "/".into() } else { t.into() }
}

impl SessionSpec {
    /// Check the spec and build the session.
    pub fn build(&self) -> Result<Session, HarnessError> {
        let def = self.harness.def();
        let api = self.api.unwrap_or(def.apis[0]);
        if !def.apis.contains(&api) {
            return Err(HarnessError::ApiMismatch {
                harness: def.name.clone(),
                api,
                supported: def
                    .apis
                    .iter()
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        check_abs("--session-dir", &self.session_dir)?;
        check_abs("--workdir", &self.workdir)?;
        check_text("--entry", &self.entry)?;
        check_text("--model", &self.model)?;
        check_text("--prompt", &self.prompt)?;
        if def.prompt == spec::PromptVia::Arg && self.prompt.len() > MAX_ARG_BYTES {
            return Err(HarnessError::Invalid {
                what: "--prompt",
                why: format!(
                    "is {} bytes; {} takes it as one argument, at most {MAX_ARG_BYTES}",
                    self.prompt.len(),
                    def.name
                ),
            });
        }
        if self.model.chars().any(|c| c.is_control()) {
            return Err(HarnessError::Invalid {
                what: "--model",
                why: "contains a control character".into(),
            });
        }
        let base = url::server_root(&self.base_url).map_err(|why| HarnessError::Invalid {
            what: "--base-url",
            why,
        })?;
        let key_env = self
            .api_key_env
            .clone()
            .unwrap_or_else(|| api.default_key_env().into());
        if crate::names::VarName::new(key_env.as_str()).is_err() {
            return Err(HarnessError::Invalid {
                what: "--api-key-env",
                why: format!("{key_env:?} is not a variable name"),
            });
        }
        if let Some(why) = crate::environ::owned_by_runtime(&key_env) {
            return Err(HarnessError::Invalid {
                what: "--api-key-env",
                why: format!("{key_env} is the runtime's, not the key's: {why}"),
            });
        }
        for name in &self.keep_env {
            if crate::names::VarName::new(name.as_str()).is_err() || name.starts_with("RUNNER_") {
                return Err(HarnessError::Invalid {
                    what: "--keep-env",
                    why: format!("{name:?} is not a variable name outside RUNNER_*"),
                });
            }
        }
        let mut spec = self.clone();
        spec.base_url = base;
        spec.session_dir = trim_slash(&self.session_dir);
        spec.workdir = trim_slash(&self.workdir);
        spec.api = Some(api);
        spec.api_key_env = Some(key_env.clone());
        let (a, b) = (Path::new(&spec.session_dir), Path::new(&spec.workdir));
        if a.starts_with(b) || b.starts_with(a) {
            return Err(HarnessError::Invalid {
                what: "--session-dir",
                why: format!(
                    "{} and the workdir {} overlap (the task must not see the session)",
                    spec.session_dir, spec.workdir
                ),
            });
        }
        let layout = Layout {
            root: spec.session_dir.clone(),
        };
        let ctx = Ctx {
            spec: &spec,
            def,
            api,
            key_env: &key_env,
            layout,
        };
        let profile = profile(&ctx)?;
        assemble(&ctx, profile)
    }
}

fn assemble(ctx: &Ctx<'_>, profile: Profile) -> Result<Session, HarnessError> {
    let l = &ctx.layout;
    let spec = ctx.spec;
    let profile_env_names: Vec<String> = profile.env.iter().map(|(n, _)| n.clone()).collect();
    let mut argv = vec![spec.entry.clone()];
    argv.extend(profile.args);
    let mut params = match spec.mode {
        Mode::Direct => RunnerParams::direct(argv).stdout(l.path("stdout.log")),
        Mode::Events => RunnerParams::events(argv, l.path("events.log")),
    };
    params = params
        .cwd(spec.workdir.clone())
        .stderr(l.path("stderr.log"));
    match profile.prompt {
        spec::PromptVia::Stdin => params = params.stdin(l.path("prompt.txt")),
        spec::PromptVia::Arg => params = params.arg_file(l.path("prompt.txt")),
        spec::PromptVia::File => {}
    }
    let common = [
        ("HOME", "home"),
        ("TMPDIR", "tmp"),
        ("XDG_CONFIG_HOME", "xdg/config"),
        ("XDG_CACHE_HOME", "xdg/cache"),
        ("XDG_DATA_HOME", "xdg/data"),
        ("XDG_STATE_HOME", "xdg/state"),
    ];
    for (name, rel) in common {
        params = params.env(name, l.path(rel));
    }
    // Quiet the npm/Node update checks any harness or tool might run.
    params = params
        .env("NO_UPDATE_NOTIFIER", "1")
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false");
    for (name, value) in profile.env {
        params = params.env(name, value);
    }
    let session_env: Vec<&str> = common
        .iter()
        .map(|(n, _)| *n)
        .chain(["NO_UPDATE_NOTIFIER", "NPM_CONFIG_UPDATE_NOTIFIER"])
        .chain(profile_env_names.iter().map(String::as_str))
        .collect();
    if session_env.contains(&ctx.key_env) {
        return Err(HarnessError::Invalid {
            what: "--api-key-env",
            why: format!(
                "{} is set by the session itself; name another variable",
                ctx.key_env
            ),
        });
    }
    if let Some(setup) = profile.setup {
        params = params.setup(setup);
    }
    // The session's own names win over the table: those it sets (exported
    // after the removal anyway) and the one it reads the key from.
    let keep: Vec<&str> = std::iter::once(ctx.key_env)
        .chain(spec.keep_env.iter().map(String::as_str))
        .collect();
    let unset = runtime::unset_list(ctx.def.runtime, &session_env, &keep);
    let mut rendered = params.render()?.into_string();
    rendered.push_str(
        crate::params::render(&[(
            "RUNNER_UNSET".to_owned(),
            crate::params::ParamValue::Array(unset.clone()),
        )])
        .map_err(RunnerParamsError::from)?
        .as_str(),
    );
    let mut capture_text =
        serde_json::to_string_pretty(&profile.capture).expect("capture serializes");
    capture_text.push('\n');
    let mut files = vec![
        SessionFile {
            path: "params.sh".into(),
            content: rendered.into_bytes(),
        },
        SessionFile {
            path: "prompt.txt".into(),
            content: spec.prompt.clone().into_bytes(),
        },
        SessionFile {
            path: "capture.json".into(),
            content: capture_text.into_bytes(),
        },
    ];
    files.extend(profile.files);
    let mut dirs: Vec<String> = COMMON_DIRS.iter().map(|d| (*d).to_owned()).collect();
    dirs.extend(profile.dirs);
    Ok(Session {
        spec: spec.clone(),
        api: ctx.api,
        api_key_env: ctx.key_env.to_owned(),
        params,
        unset,
        capture: profile.capture,
        files,
        dirs,
    })
}

impl Session {
    /// A file's content by relative path.
    pub fn file(&self, path: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.content.as_slice())
    }

    /// Write the session into `out` on the host. `out` must not exist or be
    /// an empty directory; the files are written into a sibling temporary
    /// directory first and renamed into place, so `out` never holds half a
    /// session.
    pub fn write_into(&self, out: &Path) -> Result<(), HarnessError> {
        use crate::files::{self, FileError};
        // Failures inside the temporary directory name the user's path
        // (`out/REL`), never the temporary one.
        let failed = |rel: &str| {
            let path = out.join(rel);
            move |source| FileError::Write { path, source }
        };
        let fill = |tmp: &Path| -> Result<(), FileError> {
            for d in &self.dirs {
                std::fs::create_dir_all(tmp.join(d)).map_err(failed(d))?;
            }
            for f in &self.files {
                let p = tmp.join(&f.path);
                if let Some(dir) = p.parent() {
                    std::fs::create_dir_all(dir).map_err(failed(&f.path))?;
                }
                // The directory is new and ours alone: nothing can be
                // planted in it, so a plain exclusive create is enough.
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&p)
                    .and_then(|mut file| std::io::Write::write_all(&mut file, &f.content))
                    .map_err(failed(&f.path))?;
            }
            Ok(())
        };
        files::write_dir_atomic(out, fill).map_err(|e| match e {
            FileError::Write { path, source } => HarnessError::Io {
                path: path.display().to_string(),
                source,
            },
            refused => HarnessError::Invalid {
                what: "--out",
                why: refused.to_string(),
            },
        })
    }
}
