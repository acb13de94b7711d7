//! The decision script: what the fake model answers, from the conversation
//! alone, the same way for every wire format.
//!
//! 1. The conversation holds a tool result → the text `done`, or, when a
//!    finish-style tool is offered (named `finish`, with a `reason`
//!    argument: Stirrup's, whose agent loop ends only through it; or named
//!    `return_result`, with a `result` argument: NOOA's), one call of it
//!    with the reason `done` (a `result` object gets its required fields:
//!    enums their first value, strings `done`). Without one, when the user
//!    text names a submit sentinel ([`SUBMIT_SENTINEL`]: mini-swe-agent's
//!    loop ends only when a command prints it) and a shell-style tool is
//!    offered, one call of that tool running `echo SENTINEL; echo done`
//!    (what follows the sentinel's line is the agent's submission).
//! 2. No tools were offered (a title request, a plain chat) → a short text.
//! 3. Otherwise exactly one tool call that writes the token to the target,
//!    through a write-style tool (`path` + `content`) or a shell-style tool
//!    (`command`/`cmd` running `printf '%s' TOKEN > TARGET`), or else a
//!    Python-style tool (`execute_python` + `code`: NOOA's CodeAct cell,
//!    Python that writes the token), with argument
//!    names read from the tool's own JSON schema. The token and target come
//!    from the user text, else the server's defaults, else [`DEFAULT_TOKEN`]
//!    and [`DEFAULT_TARGET`]. Without a usable tool, the answer is `done` and
//!    the log says why.

use serde_json::{Map, Value, json};

use crate::quote::{CommandLine, QuoteError, Raw, quote};

/// The text of a reply to a request that offered no tools.
pub const PLAIN_TEXT: &str = "shforge fake model reply";
/// The text of a reply that ends the task.
pub const DONE_TEXT: &str = "done";
/// The token written when neither the user text nor the server names one.
pub const DEFAULT_TOKEN: &str = "shforge-fake-model-token";
/// The file written when neither names one: a relative path, so it lands in
/// the working directory of the CLI that runs the tool.
pub const DEFAULT_TARGET: &str = "shforge-fake-model-token.txt";

/// The line whose output ends a bash-only agent's task: mini-swe-agent
/// (and the SWE-agent family) tell the model to run `echo` of it, and
/// stop when a command's output starts with it.
pub const SUBMIT_SENTINEL: &str = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

/// Which kind of tool writes the file when both kinds are offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefer {
    /// A write-style tool (`write`, `Write`, `write_file`, ...).
    Write,
    /// A shell-style tool (`bash`, `Bash`, `exec`, `exec_command`, `shell`, ...).
    Shell,
}

impl std::str::FromStr for Prefer {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "write" => Ok(Prefer::Write),
            "shell" => Ok(Prefer::Shell),
            _ => Err(format!("expected write or shell, not {s:?}")),
        }
    }
}

/// What to write where, and how. Each field may come from the server's
/// defaults or from a `shforge-NAME=VALUE` word in the conversation's user text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Directives {
    /// The exact bytes to write.
    pub token: Option<String>,
    /// The file to write them to (as the harness's tool will resolve it).
    pub target: Option<String>,
    /// Which kind of tool to use when both exist.
    pub prefer: Option<Prefer>,
}

impl Directives {
    /// Scan user text for `shforge-token=`, `shforge-target=` and
    /// `shforge-prefer=` words; a later word overrides an earlier one and
    /// any word overrides `self`. An unknown `shforge-prefer` value is ignored.
    ///
    /// A text wrapped whole in double quotes is unwrapped first: OpenCode
    /// 1.17 sends `run "PROMPT"`'s prompt as `"PROMPT"`, which would
    /// otherwise glue a `"` to the last word.
    pub fn overridden_by<'a>(mut self, texts: impl IntoIterator<Item = &'a str>) -> Directives {
        for text in texts {
            let text = text.trim();
            let text = text
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .unwrap_or(text);
            for word in text.split_whitespace() {
                if let Some(v) = word.strip_prefix("shforge-token=") {
                    self.token = Some(v.to_owned());
                } else if let Some(v) = word.strip_prefix("shforge-target=") {
                    // An empty target would be `> ''`, which no shell opens.
                    self.target = Some(v.to_owned()).filter(|t| !t.is_empty());
                } else if let Some(Ok(p)) = word.strip_prefix("shforge-prefer=").map(str::parse) {
                    self.prefer = Some(p);
                }
            }
        }
        self
    }
}

/// A tool the client offered: its name and its parameters' JSON schema.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The name the model calls it by.
    pub name: String,
    /// The JSON schema of its arguments (`{}` when the client sent none).
    pub schema: Value,
}

/// What every wire format boils down to for the decision.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    /// The model name the client asked for (echoed back).
    pub model: String,
    /// The client asked for a stream.
    pub stream: bool,
    /// The tools offered.
    pub tools: Vec<Tool>,
    /// The text of every user message, in order (tool results excluded).
    pub user_texts: Vec<String>,
    /// Some message carries a tool's result.
    pub has_tool_result: bool,
}

/// One tool call: the tool's name and its arguments object.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name, as offered.
    pub name: String,
    /// The arguments, matching the tool's schema.
    pub arguments: Map<String, Value>,
}

/// The fake model's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// No tools offered: a short text.
    Text,
    /// The task is over (or cannot be done): the text `done`, and why.
    Done {
        /// Why `done` (logged).
        reason: String,
    },
    /// Exactly one tool call.
    Tool(ToolCall),
}

impl Decision {
    /// `text`, `done` or `tool`, as logged.
    pub fn label(&self) -> &'static str {
        match self {
            Decision::Text => "text",
            Decision::Done { .. } => "done",
            Decision::Tool(_) => "tool",
        }
    }

    /// The reply text, for the text kinds.
    pub fn text(&self) -> Option<&'static str> {
        match self {
            Decision::Text => Some(PLAIN_TEXT),
            Decision::Done { .. } => Some(DONE_TEXT),
            Decision::Tool(_) => None,
        }
    }
}

/// Decide the answer to `conv` given the server's `defaults`.
pub fn decide(conv: &Conversation, defaults: &Directives) -> Decision {
    if conv.has_tool_result {
        if let Some(call) = conv.tools.iter().find_map(finish_call) {
            return Decision::Tool(call);
        }
        if let Some(call) = submit_call(conv) {
            return Decision::Tool(call);
        }
        return Decision::Done {
            reason: "the conversation holds a tool result".into(),
        };
    }
    if conv.tools.is_empty() {
        return Decision::Text;
    }
    let d = defaults
        .clone()
        .overridden_by(conv.user_texts.iter().map(String::as_str));
    let token = d.token.as_deref().unwrap_or(DEFAULT_TOKEN);
    let target = d
        .target
        .as_deref()
        .filter(|t| !t.is_empty())
        .unwrap_or(DEFAULT_TARGET);
    let writer = conv.tools.iter().find_map(WriteTool::of);
    let shell = conv.tools.iter().find_map(ShellTool::of);
    let python = conv.tools.iter().find_map(python_call(token, target));
    let call = match (d.prefer, writer, shell) {
        (Some(Prefer::Shell), _, Some(s)) | (_, None, Some(s)) => s.call(token, target),
        (_, Some(w), _) => Ok(w.call(token, target)),
        (_, None, None) if python.is_some() => Ok(python.expect("checked")),
        (_, None, None) => {
            return Decision::Done {
                reason: format!(
                    "no write-style or shell-style tool among {:?}",
                    conv.tools.iter().map(|t| &t.name).collect::<Vec<_>>()
                ),
            };
        }
    };
    match call {
        Ok(call) => Decision::Tool(call),
        Err(e) => Decision::Done {
            reason: format!("cannot build the shell command: {e}"),
        },
    }
}

/// Property names that hold a file's path, best first.
const PATH_PROPS: &[&str] = &[
    "file_path",
    "filePath",
    "path",
    "filepath",
    "filename",
    "file",
    "target_file",
    "targetFile",
];
/// Property names that hold a file's content, best first.
const CONTENT_PROPS: &[&str] = &["content", "contents", "file_text", "text", "data"];
/// Property names that hold a shell command (`commands`: a list of
/// command strings, each run by a shell: Cline's `run_commands`).
const COMMAND_PROPS: &[&str] = &["command", "cmd", "script", "commands"];
/// Names of shell-style tools (compared case-insensitively).
const SHELL_NAMES: &[&str] = &[
    "bash",
    "shell",
    "sh",
    "exec",
    "exec_command",
    "shell_command",
    "run_command",
    "run_commands",
    "run_shell_command",
    "execute_command",
    "run_terminal_cmd",
    "terminal",
    "code_exec",
];

/// A call of a finish-style tool (`finish` with a `reason` property), whose
/// other required arguments get their placeholders (Stirrup's `paths`: `[]`),
/// or `return_result` with a `result` property (NOOA's CodeAct), whose
/// value is built from its schema by [`result_value`].
fn finish_call(tool: &Tool) -> Option<ToolCall> {
    let props = properties(&tool.schema)?;
    let mut args = Map::new();
    if tool.name == "finish" && props.contains_key("reason") {
        args.insert("reason".into(), json!(DONE_TEXT));
    } else if tool.name == "return_result" && props.contains_key("result") {
        args.insert(
            "result".into(),
            result_value(&props["result"], &tool.schema, 0),
        );
    } else {
        return None;
    }
    fill_required(&tool.schema, &mut args);
    Some(ToolCall {
        name: tool.name.clone(),
        arguments: args,
    })
}

/// A shell call running `echo SENTINEL; echo done` (the submission is
/// the output after the sentinel's line: `done`, as other harnesses'
/// final text), when the user text names
/// [`SUBMIT_SENTINEL`] and a shell-style tool taking one command string is
/// offered (mini-swe-agent's `bash`).
fn submit_call(conv: &Conversation) -> Option<ToolCall> {
    if !conv.user_texts.iter().any(|t| t.contains(SUBMIT_SENTINEL)) {
        return None;
    }
    let shell = conv
        .tools
        .iter()
        .filter_map(ShellTool::of)
        .find(|s| !s.argv && !s.list)?;
    let mut args = Map::new();
    args.insert(
        shell.command.into(),
        json!(format!("echo {SUBMIT_SENTINEL}; echo {DONE_TEXT}")),
    );
    fill_required(&shell.tool.schema, &mut args);
    Some(ToolCall {
        name: shell.tool.name.clone(),
        arguments: args,
    })
}

/// A value for a `return_result`'s `result` schema: a `$ref` is followed
/// into the tool schema's `$defs` (a few levels at most), an enum gives its
/// first value, an object its required properties, a string `done`.
fn result_value(schema: &Value, root: &Value, depth: usize) -> Value {
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        return match root.get("$defs").and_then(|d| d.get(name)) {
            Some(def) if depth < 8 => result_value(def, root, depth + 1),
            _ => Value::Null,
        };
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    if let Some(props) = properties(schema) {
        let mut obj = Map::new();
        let required = schema.get("required").and_then(Value::as_array);
        for name in required.into_iter().flatten().filter_map(Value::as_str) {
            let prop = props.get(name).unwrap_or(&Value::Null);
            obj.insert(name.to_owned(), result_value(prop, root, depth + 1));
        }
        return Value::Object(obj);
    }
    if type_is(schema, "string") {
        return json!(DONE_TEXT);
    }
    placeholder("result", schema)
}

/// A Python-style tool (`execute_python`, or a name with `python`, with a
/// `code` property: NOOA's CodeAct cell): a call whose code writes exactly
/// the token to the target. Both are JSON string literals, which Python
/// reads as the same strings.
fn python_call<'a>(token: &'a str, target: &'a str) -> impl Fn(&Tool) -> Option<ToolCall> + 'a {
    move |tool| {
        if !tool.name.to_ascii_lowercase().contains("python")
            || !properties(&tool.schema)?.contains_key("code")
        {
            return None;
        }
        let code = format!(
            "with open({}, \"w\", encoding=\"utf-8\", newline=\"\") as f:\n    f.write({})\n",
            json!(target),
            json!(token)
        );
        let mut args = Map::new();
        args.insert("code".into(), json!(code));
        fill_required(&tool.schema, &mut args);
        Some(ToolCall {
            name: tool.name.clone(),
            arguments: args,
        })
    }
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties")?.as_object()
}

fn find_prop<'a>(props: &'a Map<String, Value>, names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|n| props.get_key_value(*n).map(|(k, _)| k.as_str()))
}

/// A tool that writes a file from a path and a content argument.
struct WriteTool<'a> {
    tool: &'a Tool,
    path: &'a str,
    content: &'a str,
}

impl<'a> WriteTool<'a> {
    fn of(tool: &'a Tool) -> Option<Self> {
        let lower = tool.name.to_ascii_lowercase();
        if !(lower.contains("write") || lower.contains("create")) {
            return None;
        }
        let props = properties(&tool.schema)?;
        Some(WriteTool {
            tool,
            path: find_prop(props, PATH_PROPS)?,
            content: find_prop(props, CONTENT_PROPS)?,
        })
    }

    fn call(&self, token: &str, target: &str) -> ToolCall {
        let mut args = Map::new();
        args.insert(self.path.into(), json!(target));
        args.insert(self.content.into(), json!(token));
        fill_required(&self.tool.schema, &mut args);
        ToolCall {
            name: self.tool.name.clone(),
            arguments: args,
        }
    }
}

/// A tool that runs a shell command from a `command`-like argument.
struct ShellTool<'a> {
    tool: &'a Tool,
    command: &'a str,
    /// The schema types the command as an array of words (an argv).
    argv: bool,
    /// The property is a list of whole command strings (`commands`).
    list: bool,
}

impl<'a> ShellTool<'a> {
    fn of(tool: &'a Tool) -> Option<Self> {
        let lower = tool.name.to_ascii_lowercase();
        if !SHELL_NAMES.contains(&lower.as_str()) && !lower.contains("bash") {
            return None;
        }
        let props = properties(&tool.schema)?;
        let command = find_prop(props, COMMAND_PROPS)?;
        let is_array = type_is(&props[command], "array");
        let list = is_array && command == "commands";
        Some(ShellTool {
            tool,
            command,
            argv: is_array && !list,
            list,
        })
    }

    fn call(&self, token: &str, target: &str) -> Result<ToolCall, QuoteError> {
        let script = write_command(token, target)?.into_string();
        let value = if self.list {
            json!([script])
        } else if self.argv {
            json!(["sh", "-c", script])
        } else {
            json!(script)
        };
        let mut args = Map::new();
        args.insert(self.command.into(), value);
        fill_required(&self.tool.schema, &mut args);
        Ok(ToolCall {
            name: self.tool.name.clone(),
            arguments: args,
        })
    }
}

/// `printf '%s' TOKEN > TARGET`: a POSIX command that writes exactly the
/// token (no newline) to the target, every value quoted by [`crate::quote`].
/// The format comes first, so a token starting with `-` is still data.
pub fn write_command(token: &str, target: &str) -> Result<Raw, QuoteError> {
    let mut raw = CommandLine::new("printf")?.arg("%s")?.arg(token)?.to_raw();
    raw.push_code(" > ").push_word(&quote(target)?);
    Ok(raw)
}

/// Whether a property schema's `type` is (or includes) `ty`.
fn type_is(schema: &Value, ty: &str) -> bool {
    match schema.get("type") {
        // Gemini's OpenAPI-style schemas say `STRING`, `OBJECT`.
        Some(Value::String(t)) => t.eq_ignore_ascii_case(ty),
        Some(Value::Array(ts)) => ts
            .iter()
            .any(|t| t.as_str().is_some_and(|t| t.eq_ignore_ascii_case(ty))),
        _ => false,
    }
}

/// Give every required property not yet set a sensible value from its
/// schema: its `default`, its first `enum` value, or a small value of its type
/// (a `description`-like string says what the call does).
fn fill_required(schema: &Value, args: &mut Map<String, Value>) {
    let Some(required) = schema.get("required").and_then(Value::as_array) else {
        return;
    };
    let props = properties(schema);
    for name in required.iter().filter_map(Value::as_str) {
        if args.contains_key(name) {
            continue;
        }
        let prop = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        args.insert(name.to_owned(), placeholder(name, prop));
    }
}

fn placeholder(name: &str, prop: &Value) -> Value {
    if let Some(d) = prop.get("default") {
        return d.clone();
    }
    if let Some(first) = prop
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if type_is(prop, "string") || prop.get("type").is_none() {
        let lower = name.to_ascii_lowercase();
        return if lower.contains("desc") || lower.contains("title") || lower.contains("justif") {
            json!("Write the shforge token to the target file")
        } else {
            json!("shforge")
        };
    }
    if type_is(prop, "integer") || type_is(prop, "number") {
        let min = prop.get("minimum").and_then(Value::as_i64).unwrap_or(0);
        let max = prop
            .get("maximum")
            .and_then(Value::as_i64)
            .unwrap_or(i64::MAX);
        return json!(60.max(min).min(max));
    }
    if type_is(prop, "boolean") {
        return json!(false);
    }
    if type_is(prop, "array") {
        return json!([]);
    }
    if type_is(prop, "object") {
        return json!({});
    }
    Value::Null
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
