//! The fake model's decisions, per harness tool set.

use super::*;

fn tool(name: &str, schema: Value) -> Tool {
    Tool {
        name: name.into(),
        schema,
    }
}

fn conv(tools: Vec<Tool>, text: &str) -> Conversation {
    Conversation {
        model: "m".into(),
        tools,
        user_texts: vec![text.into()],
        ..Conversation::default()
    }
}

fn pi_tools() -> Vec<Tool> {
    vec![
        tool(
            "bash",
            json!({"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"}},"required":["command"]}),
        ),
        tool(
            "write",
            json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}),
        ),
    ]
}

#[test]
fn directives_later_words_win_and_bad_prefer_is_ignored() {
    let d = Directives::default().overridden_by([
        "\"shforge-token=a shforge-prefer=shell\"",
        "x shforge-token=b\tshforge-target=/t shforge-prefer=nope",
    ]);
    assert_eq!(d.token.as_deref(), Some("b"));
    assert_eq!(d.target.as_deref(), Some("/t"));
    assert_eq!(d.prefer, Some(Prefer::Shell));
    let d = d.overridden_by(["shforge-target="]);
    assert_eq!(d.target, None, "an empty target is no target");
}

#[test]
fn write_preferred_by_default_shell_on_request() {
    let c = conv(pi_tools(), "shforge-token=T shforge-target=/o");
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!()
    };
    assert_eq!(call.name, "write");
    assert_eq!(
        call.arguments,
        *json!({"path":"/o","content":"T"}).as_object().unwrap()
    );
    let c = conv(
        pi_tools(),
        "shforge-token=T shforge-target=/o shforge-prefer=shell",
    );
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!()
    };
    assert_eq!(call.name, "bash");
    assert_eq!(call.arguments["command"], json!("printf '%s' T > /o"));
}

#[test]
fn required_unknowns_are_filled() {
    let t = tool(
        "Bash",
        json!({"properties":{"command":{"type":"string"},"description":{"type":"string"},"mode":{"enum":["a","b"]},"n":{"type":"integer","minimum":100}},"required":["command","description","mode","n"]}),
    );
    let d = Directives {
        token: Some("t".into()),
        target: Some("f".into()),
        prefer: None,
    };
    let Decision::Tool(call) = decide(&conv(vec![t], ""), &d) else {
        panic!()
    };
    assert_eq!(
        call.arguments["description"],
        json!("Write the shforge token to the target file")
    );
    assert_eq!(call.arguments["mode"], json!("a"));
    assert_eq!(call.arguments["n"], json!(100));
}

#[test]
fn a_commands_list_gets_one_whole_command() {
    // Cline's run_commands: each string of `commands` is run by a shell.
    let t = tool(
        "run_commands",
        json!({"properties":{"commands":{"type":"array","items":{"type":"string"}}},
               "required":["commands"]}),
    );
    let c = conv(vec![t], "shforge-token=x shforge-target=y");
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!()
    };
    assert_eq!(call.arguments["commands"], json!(["printf '%s' x > y"]));
}

#[test]
fn array_command_is_an_argv() {
    let t = tool(
        "shell",
        json!({"properties":{"command":{"type":"array","items":{"type":"string"}}}}),
    );
    let c = conv(vec![t], "shforge-token=x shforge-target=y");
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!()
    };
    assert_eq!(
        call.arguments["command"],
        json!(["sh", "-c", "printf '%s' x > y"])
    );
}

fn stirrup_tools() -> Vec<Tool> {
    vec![
        tool(
            "code_exec",
            json!({"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}),
        ),
        tool(
            "finish",
            json!({"type": "object", "properties": {
                "reason": {"type": "string"},
                "paths": {"type": "array", "items": {"type": "string"}}
            }, "required": ["reason", "paths"]}),
        ),
    ]
}

#[test]
fn stirrup_runs_code_exec_then_calls_finish() {
    let mut c = conv(stirrup_tools(), "shforge-token=T shforge-target=/o/d.txt");
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!("expected a tool call");
    };
    assert_eq!(call.name, "code_exec");
    assert_eq!(call.arguments["cmd"], json!("printf '%s' T > /o/d.txt"));
    c.has_tool_result = true;
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!("expected the finish call");
    };
    assert_eq!(call.name, "finish");
    assert_eq!(call.arguments["reason"], json!("done"));
    assert_eq!(call.arguments["paths"], json!([]));
}

#[test]
fn mini_swe_agent_runs_bash_then_echoes_the_sentinel() {
    let bash = tool(
        "bash",
        json!({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}),
    );
    let text = format!(
        "Please solve this issue: shforge-token=T shforge-target=/o/d.txt\n`echo {SUBMIT_SENTINEL}`"
    );
    let mut c = conv(vec![bash.clone()], &text);
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!("expected a tool call");
    };
    assert_eq!(call.arguments["command"], json!("printf '%s' T > /o/d.txt"));
    c.has_tool_result = true;
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!("expected the submit call");
    };
    assert_eq!(call.name, "bash");
    assert_eq!(
        call.arguments["command"],
        json!(format!("echo {SUBMIT_SENTINEL}; echo done"))
    );
    // Without the sentinel in the user text: `done`, as before.
    let mut c = conv(vec![bash], "shforge-token=T");
    c.has_tool_result = true;
    assert_eq!(decide(&c, &Directives::default()).label(), "done");
}

#[test]
fn nooa_writes_in_python_then_returns_its_result() {
    let tools = vec![
        tool(
            "execute_python",
            json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}),
        ),
        tool(
            "return_result",
            json!({"$defs": {
                "RespondReason": {"enum": ["DONE", "NEED_INPUT"], "type": "string"},
                "RespondResult": {"type": "object", "properties": {
                    "kind": {"$ref": "#/$defs/RespondReason"},
                    "explanation": {"type": "string", "minLength": 1}
                }, "required": ["kind", "explanation"]}},
                "type": "object",
                "properties": {"result": {"$ref": "#/$defs/RespondResult"}},
                "required": ["result"]}),
        ),
    ];
    let mut c = conv(tools, "shforge-token=a\"b shforge-target=/o/d.txt");
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!("expected a tool call");
    };
    assert_eq!(call.name, "execute_python");
    assert_eq!(
        call.arguments["code"],
        json!(
            "with open(\"/o/d.txt\", \"w\", encoding=\"utf-8\", newline=\"\") as f:\n    f.write(\"a\\\"b\")\n"
        )
    );
    c.has_tool_result = true;
    let Decision::Tool(call) = decide(&c, &Directives::default()) else {
        panic!("expected the return_result call");
    };
    assert_eq!(call.name, "return_result");
    assert_eq!(
        call.arguments["result"],
        json!({"kind": "DONE", "explanation": "done"})
    );
}

#[test]
fn a_finish_without_reason_is_not_a_finish_tool() {
    let mut c = conv(
        vec![tool(
            "finish",
            json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        )],
        "",
    );
    c.has_tool_result = true;
    assert_eq!(decide(&c, &Directives::default()).label(), "done");
}

#[test]
fn done_and_text_cases() {
    let mut c = conv(pi_tools(), "shforge-token=T shforge-target=/o");
    c.has_tool_result = true;
    assert_eq!(decide(&c, &Directives::default()).label(), "done");
    assert_eq!(
        decide(
            &conv(vec![], "shforge-token=T shforge-target=/o"),
            &Directives::default()
        ),
        Decision::Text
    );
    // No token or target anywhere: the built-in ones.
    let Decision::Tool(call) = decide(&conv(pi_tools(), "no directives"), &Directives::default())
    else {
        panic!("a tool call with the default token and target");
    };
    assert_eq!(call.arguments["path"], json!(DEFAULT_TARGET));
    assert_eq!(call.arguments["content"], json!(DEFAULT_TOKEN));
    let other = vec![tool("read", json!({"properties":{"path":{}}}))];
    assert_eq!(
        decide(
            &conv(other, "shforge-token=T shforge-target=/o"),
            &Directives::default()
        )
        .label(),
        "done"
    );
}

#[test]
fn hostile_values_stay_data() {
    let raw = write_command("-n'$(id)\"", "a b/'c'").unwrap();
    assert_eq!(raw.as_str(), r#"printf '%s' "-n'\$(id)\"" > "a b/'c'""#);
    assert!(write_command("a\0b", "x").is_err());
}
