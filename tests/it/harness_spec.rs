//! Harness specs (`harnesses/NAME.toml`): the golden outputs of the six
//! shipped harnesses, and adapter specs given with `--spec FILE`.
//!
//! The golden files under `tests/fixtures/harness/golden/` were written by
//! the hand-coded profiles before the harnesses became data (commit
//! "harness spec: golden session dirs of the six hand-coded profiles"):
//! every harness × API × mode with plain inputs, and per harness one case
//! with a hostile model, a named key variable and a base URL with a path.
//! The session dir `shforge harness` writes from the spec must equal them
//! byte for byte. `SHFORGE_BLESS_GOLDEN=1` rewrites them (only for an
//! intended change of a profile; the diff then shows what changed).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use shforge::harness::Harness;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harness/golden")
}

fn shforge(args: &[String]) -> Output {
    let mut c = Command::new(support::shforge());
    c.args(args);
    support::run(c)
}

/// A model full of every config syntax the harnesses expand, and shell.
const HOSTILE_MODEL: &str =
    "m{file:/etc/passwd}{env:HOME}${SECRET}$${X}$(id)`id`'\"\\ é!cat<SECRET";
const PROMPT: &str = "write the token\n$(touch /tmp/x) 'q' \"d\" \\ -- @file\n";

/// One golden case: its name and the `shforge harness` arguments after
/// `--out DIR`.
struct Case {
    name: String,
    args: Vec<String>,
}

fn base_args(harness: &str, mode: &str) -> Vec<String> {
    [
        harness,
        "--session-dir",
        "/sandbox/session",
        "--workdir",
        "/task/work",
        "--entry",
        "/opt/h/bin/cli",
        "--mode",
        mode,
        "--prompt",
        PROMPT,
    ]
    .map(String::from)
    .to_vec()
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for h in Harness::ALL {
        for &api in h.apis() {
            for mode in ["events", "direct"] {
                let mut args = base_args(h.name(), mode);
                args.extend(
                    [
                        "--base-url",
                        "http://127.0.0.1:4321",
                        "--model",
                        "fake-model",
                        "--api",
                        api.name(),
                    ]
                    .map(String::from),
                );
                out.push(Case {
                    name: format!("{h}-{mode}-{api}"),
                    args,
                });
            }
        }
        let mut args = base_args(h.name(), "events");
        args.extend(
            [
                "--base-url",
                "HTTP://LocalHost:8080/prefix/v1/",
                "--model",
                HOSTILE_MODEL,
                "--api-key-env",
                "MY_KEY_2",
            ]
            .map(String::from),
        );
        out.push(Case {
            name: format!("{h}-hostile"),
            args,
        });
    }
    out
}

/// The session dir as text: each directory and file by relative path,
/// sorted, a file with its length and bytes.
fn dump(dir: &Path) -> Vec<u8> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            if p.is_dir() {
                out.push((rel, None));
                walk(root, &p, out);
            } else {
                out.push((rel, Some(std::fs::read(&p).unwrap())));
            }
        }
    }
    let mut entries = Vec::new();
    walk(dir, dir, &mut entries);
    entries.sort();
    let mut text = Vec::new();
    for (rel, content) in entries {
        match content {
            None => text.extend(format!("dir {rel}\n").bytes()),
            Some(bytes) => {
                text.extend(format!("file {rel} {}\n", bytes.len()).bytes());
                text.extend(&bytes);
                text.push(b'\n');
            }
        }
    }
    text
}

/// `via_spec`: name the shipped harness by its file (`--spec
/// harnesses/NAME.toml`) instead of NAME: the adapter's path.
fn written(case: &Case, via_spec: bool) -> Vec<u8> {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let mut args = vec!["harness".to_owned()];
    if via_spec {
        let file = support::root().join(format!("harnesses/{}.toml", case.args[0]));
        args.extend(["--spec".into(), file.display().to_string()]);
        args.extend(case.args[1..].iter().cloned());
    } else {
        args.extend(case.args.iter().cloned());
    }
    args.extend(["--out".into(), out_dir.display().to_string()]);
    let out = shforge(&args);
    assert!(
        out.status.success(),
        "{}: {}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    dump(&out_dir)
}

#[test]
fn shipped_harnesses_write_the_golden_session_dirs() {
    let bless = std::env::var_os("SHFORGE_BLESS_GOLDEN").is_some();
    let cases = cases();
    // 6 harnesses × 3 APIs + 7 × 1, × 2 modes, + one hostile case each
    // (Gemini CLI's were written from its spec: it never had a hand-coded
    // profile).
    // Then Continue CLI (chat) and Copilot CLI (chat, responses), from
    // their specs too. Then Kimi CLI (chat: two modes and a hostile case),
    // then Mistral Vibe (chat, both modes, and its hostile case).
    assert_eq!(cases.len(), (6 * 3 + 7) * 2 + 13 + (1 + 2) * 2 + 2 + 3 + 3);
    let mut differ = Vec::new();
    for case in &cases {
        let got = written(case, false);
        let path = golden_dir().join(format!("{}.txt", case.name));
        if bless {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if got != want {
            differ.push(format!(
                "{}:\n--- golden\n{}\n--- written\n{}",
                case.name,
                String::from_utf8_lossy(&want),
                String::from_utf8_lossy(&got)
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The shipped files given as adapter specs write the same bytes: an
/// adapter's spec takes the very path the shipped six do.
#[test]
fn shipped_spec_files_given_with_spec_write_the_golden_session_dirs() {
    for case in cases() {
        let path = golden_dir().join(format!("{}.txt", case.name));
        let want = std::fs::read(&path).unwrap();
        assert!(
            written(&case, true) == want,
            "{} via --spec differs",
            case.name
        );
    }
}

const SECRET: &str = "sk-shforge-spec-SECRET-31c4";

/// An adapter's harness, "toy": every format, per-API values, the key by
/// variable name, extra dirs. `PROMPT_VIA` and `PROMPT_ARGS` are replaced
/// per test.
const TOY: &str = r##"
name = "toy"
description = "a harness shforge does not ship"
installer = "installers/toy.toml"
apis = ["chat", "anthropic"]

[run]
prompt = "PROMPT_VIA"
args = ["--model", "{{model}}", "--config", "{{session}}/toy/config.json", "--url", "{{base_url}}"PROMPT_ARGS]
env = [["TOY_HOME", "{{session}}/toy"], ["TOY_KEY_NAME", "{{key_env}}"], ["TOY_WIRE", "{{api.wire}}"]]
dirs = ["toy/data"]

[api.chat]
url_path = "/v1"
values = { wire = "openai" }

[api.anthropic]
values = { wire = "anthropic" }

[[file]]
path = "toy/config.json"
format = "opencode-json"
content = '''
{"model": "toy/{{model}}", "wire": "{{api.wire}}", "key": "{{key_ref}}",
 "models": {"{{model}}": {"url": "{{base_url}}"}}}
'''

[[file]]
path = "toy/claw.json"
format = "openclaw-json"
content = '{"id": "{{model}}", "key": "{{key_ref}}", "n": 1}'

[[file]]
path = "toy/config.toml"
format = "toml"
content = """
model = "{{model}}"
env_key = "{{key_env}}"
"""

[[file]]
path = "toy/plain.json"
format = "json"
content = '{"model": "{{model}}", "workdir": "{{workdir}}", "keyName": "{{key_env}}"}'

[capture]
dir = "toy/data"
"##;

fn toy(stdin: bool) -> String {
    if stdin {
        TOY.replace("PROMPT_VIA", "stdin")
            .replace("PROMPT_ARGS", "")
    } else {
        TOY.replace("PROMPT_VIA", "file")
            .replace("PROMPT_ARGS", r#", "--message-file", "{{prompt_file}}""#)
    }
}

/// The toy CLI: records its prompt (stdin or `--message-file`), HOME, the
/// key it finds through the variable the session names, its argv, and
/// writes into HOME.
const TOY_CLI: &str = r#"#!/bin/bash
out=$SHFORGE_TEST_OUT
prev=
for a in "$@"; do
  if [[ $prev == --message-file ]]; then cat -- "$a" > "$out.prompt"; fi
  prev=$a
done
if [[ ! -e $out.prompt ]]; then cat > "$out.prompt"; fi
printf '%s' "$HOME" > "$out.home"
printf '%s' "${!TOY_KEY_NAME-unset}" > "$out.key"
printf '%s\0' "$@" > "$out.argv"
echo cli > "$HOME/written-by-cli"
"#;

const TOY_MODEL: &str = "m{file:/etc/passwd}{env:HOME}${SECRET}$${X}$(id)`id`'\"\\ -x";

fn has(bytes: &[u8], needle: &str) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

fn json_at(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Write the toy session for one prompt route and API.
fn toy_session(case: &Path, stdin: bool, api: &str, cli: &Path, prompt_file: &Path) -> Output {
    let (session, work) = (case.join("session"), case.join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let spec = case.join("toy.toml");
    std::fs::write(&spec, toy(stdin)).unwrap();
    let mut c = Command::new(support::shforge());
    c.args(["harness", "--spec"])
        .arg(&spec)
        .arg("--out")
        .arg(&session)
        .arg("--session-dir")
        .arg(&session)
        .arg("--workdir")
        .arg(&work)
        .arg("--entry")
        .arg(cli)
        .args(["--base-url", "http://127.0.0.1:4321/v1", "--api", api])
        .args(["--model", TOY_MODEL, "--api-key-env", "TOY_SECRET_KEY"])
        .arg("--prompt-file")
        .arg(prompt_file)
        .env("TOY_SECRET_KEY", SECRET)
        .env("OPENAI_API_KEY", SECRET);
    support::run(c)
}

/// The configs hold the hostile model as data in each format.
fn check_toy_configs(what: &str, session: &Path, work: &Path, url: &str, wire: &str) {
    // opencode-json: no `{env:`/`{file:` but the key reference, and the
    // JSON means the input.
    let text = std::fs::read_to_string(session.join("toy/config.json")).unwrap();
    assert_eq!(text.matches("{env:").count(), 1, "{what}: {text}");
    assert!(!text.contains("{file:"), "{what}: {text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["model"], format!("toy/{TOY_MODEL}"), "{what}");
    assert_eq!(v["key"], "{env:TOY_SECRET_KEY}", "{what}");
    assert_eq!(v["wire"], wire, "{what}");
    assert_eq!(v["models"][TOY_MODEL]["url"], url, "{what}");
    // openclaw-json: every `${NAME}` of the input escaped as `$${NAME}`.
    let v = json_at(&session.join("toy/claw.json"));
    let escaped = TOY_MODEL.replace("$${X}", "$$${X}").replace(
        "m{file:/etc/passwd}{env:HOME}${SECRET}",
        "m{file:/etc/passwd}{env:HOME}$${SECRET}",
    );
    assert_eq!(v["id"], escaped, "{what}");
    assert_eq!(v["key"], "${TOY_SECRET_KEY}", "{what}");
    assert_eq!(v["n"], 1, "{what}");
    let t: toml::Table = std::fs::read_to_string(session.join("toy/config.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(t["model"].as_str(), Some(TOY_MODEL), "{what}");
    assert_eq!(t["env_key"].as_str(), Some("TOY_SECRET_KEY"), "{what}");
    let v = json_at(&session.join("toy/plain.json"));
    assert_eq!(v["model"], TOY_MODEL, "{what}");
    assert_eq!(v["workdir"], work.display().to_string(), "{what}");
    assert_eq!(v["keyName"], "TOY_SECRET_KEY", "{what}");
}

/// Every rule of the shipped six, for an adapter's spec: the key's value
/// never written, the prompt byte for byte (stdin and file), the task's
/// HOME untouched, hostile values data in every config format, argv words
/// as given.
#[test]
fn an_adapter_spec_keeps_every_rule_of_the_shipped_six() {
    use std::os::unix::fs::PermissionsExt;
    let runner = support::root().join("generated/harness_runner.sh");
    let tmp = tempfile::tempdir().unwrap();
    let cli = tmp.path().join("toy-cli");
    std::fs::write(&cli, TOY_CLI).unwrap();
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let task_home = tmp.path().join("task-home");
    std::fs::create_dir_all(task_home.join(".config")).unwrap();
    std::fs::write(task_home.join(".bashrc"), "# task\n").unwrap();
    let home_before = dump(&task_home);
    let prompt =
        "it's \"q\"\n$(touch /tmp/shforge-toy-pwned) `id` ${HOME}\n--help @/etc/passwd\n\n";
    let prompt_file = tmp.path().join("prompt");
    std::fs::write(&prompt_file, prompt).unwrap();
    let bashes = support::bashes();
    for stdin in [true, false] {
        for (api, url, wire) in [
            ("chat", "http://127.0.0.1:4321/v1", "openai"),
            ("anthropic", "http://127.0.0.1:4321", "anthropic"),
        ] {
            let what = format!("stdin={stdin} api={api}");
            let case = tmp.path().join(format!("{stdin}-{api}"));
            let (session, work) = (case.join("session"), case.join("work"));
            let out = toy_session(&case, stdin, api, &cli, &prompt_file);
            assert!(
                out.status.success(),
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                !has(&dump(&session), SECRET),
                "{what}: the key's value was written"
            );
            assert!(
                std::fs::read(session.join("prompt.txt")).unwrap() == prompt.as_bytes(),
                "{what}"
            );
            assert_eq!(
                json_at(&session.join("capture.json")),
                serde_json::json!({"harness": "toy", "kind": null,
                    "dir": format!("{}/toy/data", session.display())}),
                "{what}"
            );
            assert!(session.join("toy/data").is_dir(), "{what}");
            check_toy_configs(&what, &session, &work, url, wire);
            for bash in &bashes {
                let seen = case.join("seen");
                for ext in ["prompt", "home", "key", "argv"] {
                    let _ = std::fs::remove_file(seen.with_extension(ext));
                }
                let mut c = bash.command(&runner);
                c.arg(session.join("params.sh"))
                    .env("SHFORGE_TEST_OUT", &seen)
                    .env("HOME", &task_home)
                    .env("TOY_SECRET_KEY", SECRET);
                let out = support::run(c);
                let on = format!("{what} {}", bash.name);
                assert!(
                    out.status.success(),
                    "{on}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let read = |ext: &str| std::fs::read(seen.with_extension(ext)).unwrap();
                assert!(read("prompt") == prompt.as_bytes(), "{on}: prompt changed");
                assert_eq!(read("key"), SECRET.as_bytes(), "{on}");
                let home = session.join("home").display().to_string();
                assert_eq!(read("home"), home.into_bytes(), "{on}");
                let argv = read("argv");
                let argv: Vec<&[u8]> = argv.split(|b| *b == 0).collect();
                assert_eq!(argv[1], TOY_MODEL.as_bytes(), "{on}");
                assert_eq!(argv[5], url.as_bytes(), "{on}");
                assert!(session.join("home/written-by-cli").is_file(), "{on}");
                assert!(
                    !has(&dump(&session), SECRET),
                    "{on}: the key's value was written"
                );
            }
        }
    }
    assert_eq!(dump(&task_home), home_before, "the task's HOME changed");
    assert!(!Path::new("/tmp/shforge-toy-pwned").exists());
    support::report("an adapter spec through harness_runner.sh", &bashes);
}

/// A small valid adapter spec; each row of the bad-spec table breaks one
/// field of it.
const MINI: &str = r##"name = "mini"
installer = "installers/mini.toml"
apis = ["chat", "anthropic"]

[run]
prompt = "stdin"
args = ["--model", "{{model}}"]
env = [["MINI_HOME", "{{session}}/mini"]]
dirs = ["mini"]

[api.chat]
url_path = "/v1"
values = { wire = "openai" }

[api.anthropic]
values = { wire = "anthropic" }

[key]
reads = "MINI_KEY"

[[file]]
path = "mini/config.json"
format = "opencode-json"
content = '{"model": "{{model}}", "wire": "{{api.wire}}", "key": "{{key_ref}}"}'

[capture]
reader = "claude-code"
dir = "mini"
"##;

fn run_spec(tmp: &Path, text: &str, extra: &[&str]) -> (Output, PathBuf) {
    let spec = tmp.join("spec.toml");
    std::fs::write(&spec, text).unwrap();
    let out_dir = tmp.join("out");
    let mut args: Vec<String> = ["harness", "--spec"].map(String::from).to_vec();
    args.push(spec.display().to_string());
    args.extend(["--out".into(), out_dir.display().to_string()]);
    for a in [
        "--session-dir",
        "/s",
        "--workdir",
        "/w",
        "--entry",
        "/e",
        "--base-url",
        "http://h",
        "--model",
        "m",
        "--prompt",
        "p",
    ]
    .iter()
    .chain(extra)
    {
        args.push((*a).into());
    }
    (shforge(&args), out_dir)
}

#[test]
fn the_mini_spec_is_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, dir) = run_spec(tmp.path(), MINI, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_at(&dir.join("mini/config.json"));
    assert_eq!(v["key"], "{env:OPENAI_API_KEY}");
    // key.reads: another named variable is copied into MINI_KEY, by name.
    let params = std::fs::read_to_string(dir.join("params.sh")).unwrap();
    assert!(
        params.contains("export MINI_KEY=\"${!shforge_key_var}\""),
        "{params}"
    );
}

/// One case per field: the spec broken there (the first `from` in MINI
/// replaced by `to`) is refused with exit 2, one line on stderr naming the
/// field, and nothing written.
mod bad_specs_name_their_field_and_exit_2 {
    use super::{MINI, run_spec};
    use crate::support::cases;

    fn refused(from: &str, to: &str, field: &str) {
        assert!(MINI.contains(from), "{from:?} is not in MINI");
        let text = MINI.replacen(from, to, 1);
        let tmp = tempfile::tempdir().unwrap();
        let (out, dir) = run_spec(tmp.path(), &text, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("harness spec: {field}")),
            "wanted {field:?} in {err}"
        );
        assert!(!dir.exists(), "wrote {}", dir.display());
    }

    cases! { refused;
        not_toml => ("[run]", "[run", "(file): line 5"),
        unknown_field => ("name = \"mini\"", "name = \"mini\"\ncolour = \"red\"", "colour:"),
        name_missing => ("name = \"mini\"\n", "", "name: is missing"),
        name_malformed => ("name = \"mini\"", "name = \"Mini Harness\"", "name:"),
        name_not_a_string => ("name = \"mini\"", "name = 3", "name: must be a string"),
        installer_not_toml => ("installers/mini.toml", "installers/mini.sh", "installer:"),
        installer_absolute => ("installers/mini.toml", "/etc/mini.toml", "installer:"),
        apis_missing => ("apis = [\"chat\", \"anthropic\"]", "", "apis: is missing"),
        apis_empty => ("apis = [\"chat\", \"anthropic\"]", "apis = []", "apis: names no API"),
        apis_unknown => (
            "[\"chat\", \"anthropic\"]",
            "[\"bard\", \"chat\", \"anthropic\"]",
            "apis[0]:",
        ),
        apis_twice => (
            "[\"chat\", \"anthropic\"]",
            "[\"chat\", \"chat\", \"anthropic\"]",
            "apis[1]:",
        ),
        run_missing => (
            "[run]\nprompt = \"stdin\"\nargs = [\"--model\", \"{{model}}\"]\nenv = [[\"MINI_HOME\", \"{{session}}/mini\"]]\ndirs = [\"mini\"]\n",
            "",
            "run: is missing",
        ),
        run_unknown_field => (
            "dirs = [\"mini\"]",
            "dirs = [\"mini\"]\nshell = \"rm -rf /\"",
            "run.shell:",
        ),
        args_missing => ("args = [\"--model\", \"{{model}}\"]\n", "", "run.args: is missing"),
        args_not_strings => ("[\"--model\", \"{{model}}\"]", "[\"--model\", 7]", "run.args[1]:"),
        unknown_placeholder => ("\"{{model}}\"]", "\"{{secret}}\"]", "run.args[1]:"),
        unclosed_placeholder => ("\"{{model}}\"]", "\"{{model\"]", "run.args[1]:"),
        key_ref_in_argv => ("\"{{model}}\"]", "\"{{key_ref}}\"]", "run.args[1]:"),
        control_character => ("\"{{model}}\"]", "\"a\\u0007b\"]", "run.args[1]:"),
        prompt_unknown => ("prompt = \"stdin\"", "prompt = \"argv\"", "run.prompt:"),
        prompt_file_not_named => ("prompt = \"stdin\"", "prompt = \"file\"", "run.args:"),
        prompt_file_with_stdin => (
            "\"{{model}}\"]",
            "\"{{model}}\", \"{{prompt_file}}\"]",
            "run.args:",
        ),
        mode_unknown_field => (
            "dirs = [\"mini\"]",
            "dirs = [\"mini\"]\nmode = { direct = { argv = [] } }",
            "run.mode.direct.argv:",
        ),
        env_not_a_pair => ("[\"MINI_HOME\", \"{{session}}/mini\"]", "\"MINI_HOME\"", "run.env[0]:"),
        env_bad_name => ("\"MINI_HOME\"", "\"1MINI\"", "run.env[0]:"),
        env_sets_home => ("\"MINI_HOME\"", "\"HOME\"", "run.env[0]:"),
        env_sets_runner => ("\"MINI_HOME\"", "\"RUNNER_ARGV\"", "run.env[0]:"),
        env_key_ref => ("\"{{session}}/mini\"]", "\"{{key_ref}}\"]", "run.env[0]:"),
        env_twice => (
            "[[\"MINI_HOME\", \"{{session}}/mini\"]]",
            "[[\"MINI_HOME\", \"a\"], [\"MINI_HOME\", \"b\"]]",
            "run.env:",
        ),
        env_sets_key_reads => ("\"MINI_HOME\"", "\"MINI_KEY\"", "run.env:"),
        dirs_absolute => ("dirs = [\"mini\"]", "dirs = [\"/etc\"]", "run.dirs[0]:"),
        dirs_dot_dot => ("dirs = [\"mini\"]", "dirs = [\"mini/../..\"]", "run.dirs[0]:"),
        api_not_listed => ("[api.anthropic]", "[api.responses]\n[api.anthropic]", "api.responses:"),
        api_unknown => ("[api.anthropic]", "[api.gemini]\n[api.anthropic]", "api.gemini:"),
        url_path_malformed => ("url_path = \"/v1\"", "url_path = \"v1?x\"", "api.chat.url_path:"),
        api_unknown_field => (
            "url_path = \"/v1\"",
            "url_path = \"/v1\"\nbase = 1",
            "api.chat.base:",
        ),
        api_value_with_placeholder => (
            "wire = \"openai\"",
            "wire = \"{{model}}\"",
            "api.chat.values.wire:",
        ),
        api_value_missing_for_one_api => (
            "values = { wire = \"anthropic\" }",
            "",
            "file[0].content:",
        ),
        api_table_unknown => ("[api.anthropic]", "[api.chat.x]\n[api.anthropic]", "api.chat.x:"),
        argv_per_mode_and_per_api => (
            "dirs = [\"mini\"]\n\n[api.chat]\nurl_path = \"/v1\"",
            "dirs = [\"mini\"]\nmode.direct.args = [\"-d\"]\n\n[api.chat]\nurl_path = \"/v1\"\nargs = [\"-c\"]",
            "run.mode:",
        ),
        key_unknown_field => (
            "reads = \"MINI_KEY\"",
            "reads = \"MINI_KEY\"\ncopy = true",
            "key.copy:",
        ),
        key_reads_malformed => ("reads = \"MINI_KEY\"", "reads = \"MINI-KEY\"", "key.reads:"),
        file_path_absolute => (
            "path = \"mini/config.json\"",
            "path = \"/etc/passwd\"",
            "file[0].path:",
        ),
        file_path_dot_dot => (
            "path = \"mini/config.json\"",
            "path = \"../x.json\"",
            "file[0].path:",
        ),
        file_path_reserved => (
            "path = \"mini/config.json\"",
            "path = \"params.sh\"",
            "file[0].path:",
        ),
        file_format_unknown => (
            "format = \"opencode-json\"",
            "format = \"yaml\"",
            "file[0].format:",
        ),
        file_format_missing => ("format = \"opencode-json\"\n", "", "file[0].format: is missing"),
        file_content_not_json => ("content = '{\"model\"", "content = '{model", "file[0].content:"),
        file_content_placeholder => (
            "\"key\": \"{{key_ref}}\"",
            "\"key\": \"{{nope}}\"",
            "file[0].content:",
        ),
        key_ref_not_whole => (
            "\"key\": \"{{key_ref}}\"",
            "\"key\": \"Bearer {{key_ref}}\"",
            "file[0].content:",
        ),
        key_ref_in_plain_json => (
            "format = \"opencode-json\"",
            "format = \"json\"",
            "file[0].content:",
        ),
        file_unknown_field => (
            "format = \"opencode-json\"",
            "format = \"opencode-json\"\nmode = \"0755\"",
            "file[0].mode:",
        ),
        file_twice => (
            "[capture]",
            "[[file]]\npath = \"mini/config.json\"\nformat = \"json\"\ncontent = '{}'\n\n[capture]",
            "file[1].path:",
        ),
        capture_missing => (
            "[capture]\nreader = \"claude-code\"\ndir = \"mini\"\n",
            "",
            "capture: is missing",
        ),
        capture_reader_unknown => (
            "reader = \"claude-code\"",
            "reader = \"gemini\"",
            "capture.reader:",
        ),
        capture_reader_takes_a_db => (
            "reader = \"claude-code\"",
            "reader = \"opencode\"",
            "capture.dir:",
        ),
        capture_db_and_dir => (
            "dir = \"mini\"\n",
            "dir = \"mini\"\ndb = \"mini/x.db\"\n",
            "capture:",
        ),
        capture_neither => ("dir = \"mini\"\n", "", "capture:"),
        capture_dir_absolute => ("dir = \"mini\"", "dir = \"/var/lib\"", "capture.dir:"),
        outcome_records_without_a_reader => (
            "reader = \"claude-code\"\ndir = \"mini\"\n",
            "dir = \"mini\"\n[outcome]\nrecords = true\n",
            "outcome.records:",
        ),
        outcome_records_not_a_bool => (
            "dir = \"mini\"\n",
            "dir = \"mini\"\n[outcome]\nrecords = \"yes\"\n",
            "outcome.records: must be true or false",
        ),
        outcome_exit_status_unknown => (
            "dir = \"mini\"\n",
            "dir = \"mini\"\n[outcome]\nexit_status = \"http\"\n",
            "outcome.exit_status:",
        ),
        outcome_unknown_field => (
            "dir = \"mini\"\n",
            "dir = \"mini\"\n[outcome]\nscan = true\n",
            "outcome.scan:",
        ),
        smoke_tool_unknown => (
            "dir = \"mini\"\n",
            "dir = \"mini\"\n[smoke]\ntool = \"editor\"\n",
            "smoke.tool:",
        ),
    }
}

/// What a spec cannot do is refused at build time by the inputs: an
/// OpenClaw-style key reference needs an upper-case variable name.
#[test]
fn openclaw_json_key_reference_needs_an_upper_case_variable() {
    let text = MINI.replace("opencode-json", "openclaw-json");
    let tmp = tempfile::tempdir().unwrap();
    let (out, dir) = run_spec(tmp.path(), &text, &["--api-key-env", "my_key"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--api-key-env") && err.contains("upper-case"),
        "{err}"
    );
    assert!(!dir.exists());
    let (out, _) = run_spec(tmp.path(), &text, &["--api-key-env", "MY_KEY"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// NAME and --spec exclude each other; one is needed; a missing or
/// directory spec file is exit 2 naming it.
#[test]
fn spec_flag_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let base = [
        "--out",
        "/nonexistent/x",
        "--session-dir",
        "/s",
        "--workdir",
        "/w",
        "--entry",
        "/e",
        "--base-url",
        "http://h",
        "--model",
        "m",
        "--prompt",
        "p",
    ];
    let run = |pre: &[&str]| {
        let args: Vec<String> = std::iter::once("harness")
            .chain(pre.iter().copied())
            .chain(base)
            .map(String::from)
            .collect();
        shforge(&args)
    };
    let spec = tmp.path().join("s.toml");
    std::fs::write(&spec, MINI).unwrap();
    let spec = spec.display().to_string();
    let missing = tmp.path().join("missing.toml").display().to_string();
    let dir = tmp.path().display().to_string();
    for (what, pre, needle) in [
        (
            "both",
            vec!["pi", "--spec", spec.as_str()],
            "cannot be used with",
        ),
        ("neither", vec![], "required"),
        (
            "missing file",
            vec!["--spec", missing.as_str()],
            "missing.toml",
        ),
        ("directory", vec!["--spec", dir.as_str()], &dir),
    ] {
        let out = run(&pre);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(needle), "{what}: {err}");
    }
}

/// `[key] reads` per API: the copy goes into the variable of the API in
/// use, an API left out gets none; a bad table names its entry, exit 2.
#[test]
fn key_reads_per_api_and_its_bad_forms() {
    let per_api = MINI.replace(
        "reads = \"MINI_KEY\"",
        "reads = { anthropic = \"MINI_ANTHROPIC_KEY\" }",
    );
    for (api, copied) in [("anthropic", Some("MINI_ANTHROPIC_KEY")), ("chat", None)] {
        let tmp = tempfile::tempdir().unwrap();
        let (out, dir) = run_spec(
            tmp.path(),
            &per_api,
            &["--api", api, "--api-key-env", "GW_KEY"],
        );
        assert!(
            out.status.success(),
            "{api}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let params = std::fs::read_to_string(dir.join("params.sh")).unwrap();
        match copied {
            Some(var) => assert!(
                params.contains(&format!("export {var}=\"${{!shforge_key_var}}\""))
                    && params.contains("shforge_key_var=GW_KEY"),
                "{api}: {params}"
            ),
            None => assert!(!params.contains("RUNNER_SETUP"), "{api}: {params}"),
        }
    }
    for (reads, field, why) in [
        (
            "{ gemini = \"K\" }",
            "key.reads.gemini",
            "gemini is not one of the spec's apis",
        ),
        (
            "{ chatty = \"K\" }",
            "key.reads.chatty",
            "\"chatty\" is not an API",
        ),
        (
            "{ chat = 1 }",
            "key.reads.chat",
            "must be a string, not integer",
        ),
        (
            "{ chat = \"RUNNER_X\" }",
            "key.reads.chat",
            "is not a variable name outside RUNNER_*",
        ),
        (
            "{ chat = \"a-b\" }",
            "key.reads.chat",
            "is not a variable name outside RUNNER_*",
        ),
        (
            "[\"K\"]",
            "key.reads",
            "must be a variable name or a table of them per API, not array",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let text = MINI.replace("reads = \"MINI_KEY\"", &format!("reads = {reads}"));
        let (out, dir) = run_spec(tmp.path(), &text, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{reads}: {err}");
        assert!(
            err.contains(&format!("harness spec: {field}: ")) && err.contains(why),
            "{reads}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!dir.exists(), "{reads}");
    }
    // The session must not set the variable of any API's key.reads.
    let tmp = tempfile::tempdir().unwrap();
    let text = per_api.replace(
        "env = [[\"MINI_HOME\", \"{{session}}/mini\"]]",
        "env = [[\"MINI_HOME\", \"{{session}}/mini\"], [\"MINI_ANTHROPIC_KEY\", \"x\"]]",
    );
    let (out, _) = run_spec(tmp.path(), &text, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("MINI_ANTHROPIC_KEY is where the CLI reads the key"),
        "{err}"
    );
}
