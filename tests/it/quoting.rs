//! Round trip: a value quoted by shforge (directly, through the askama
//! escaper, and through `shforge params`) and printed by a real shell comes
//! back byte for byte, under every shell of the matrix, in C and UTF-8.

use crate::support;

use std::fs;
use std::process::Command;

use askama::Template;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use shforge::quote::{Value, quote};
use support::{Kind, Shell};

/// Hand-picked hard cases.
fn corpus() -> Vec<String> {
    let mut v: Vec<String> = [
        "",
        " ",
        "  ",
        "a",
        "'",
        "''",
        "\"",
        "\\",
        "\\\\",
        "$",
        "$x",
        "${x}",
        "$(id)",
        "`id`",
        "!",
        "!!",
        "!$",
        "a'b",
        "it's \"quoted\"",
        "\n",
        "\n\n",
        "a\nb",
        "trailing\n",
        "\r",
        "a\r\n",
        "\t",
        "a\tb",
        "-",
        "-n",
        "-e",
        "--",
        "-x y",
        "=",
        "FOO=bar",
        "a=b=c",
        "%",
        "%1",
        "%+",
        "~",
        "~root",
        "~/x",
        "*",
        "?",
        "[",
        "[a]",
        "]",
        "#",
        "#x",
        "a#b",
        "{a,b}",
        "{}",
        ";",
        "&",
        "|",
        "&&",
        "<",
        ">",
        "(",
        ")",
        "a b c",
        "\u{1}",
        "\u{7f}",
        "x\u{1}y",
        "p\u{7f}q",
        "\u{1b}[31m",
        "é",
        "日本語",
        "emoji \u{1F600}",
        "\u{feff}",
        "\u{200b}",
        "a\u{0}b",
    ]
    .iter()
    .filter(|s| !s.contains('\0'))
    .map(|s| s.to_string())
    .collect();
    v.push((1u8..=127).filter(|&b| b != 0).map(char::from).collect());
    v.push("x".repeat(5000));
    // Values holding ' are double-quoted: every character special there.
    v.push("x'y".repeat(3000));
    v.push("'\"\\$`!\n\\\n$(id)`id`\\\\'".to_owned());
    v.push("'\\".to_owned());
    v.push("'\\\n".to_owned());
    v.push("'\u{1}\u{7f}\u{1}\u{7f}".to_owned());
    v
}

/// Random strings weighted toward shell-special characters.
fn random_strings(n: usize) -> Vec<String> {
    let special = prop::sample::select(vec![
        '\'', '"', '\\', '$', '`', '!', '\n', '\r', '\t', '-', '=', '%', '~', '*', '?', '[', ']',
        '#', '{', '}', '(', ')', ';', '&', '|', '<', '>', ' ', '\u{1}', '\u{7f}', '\u{1b}', 'é',
        '\u{2028}',
    ]);
    let ch = prop_oneof![3 => special, 2 => any::<char>().prop_filter("no NUL", |c| *c != '\0'), 2 => prop::char::range('a', 'z')];
    let strategy =
        prop::collection::vec(ch, 0..24).prop_map(|cs| cs.into_iter().collect::<String>());
    let seed = std::env::var("SHFORGE_PROPTEST_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0x5f0_59e);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).expect("strategy").current())
        .collect()
}

fn all_strings() -> Vec<String> {
    let mut v = corpus();
    v.extend(random_strings(400));
    v
}

/// yash cannot hold non-ASCII bytes under the C locale (docs/portability.md): its
/// C-locale runs cover the ASCII strings only, and say so.
fn usable(shell: &Shell, locale: &str, s: &str) -> bool {
    !(shell.name == "yash" && locale == "C" && !s.is_ascii())
}

fn run_and_split(shell: &Shell, script: &std::path::Path, locale: &str) -> Vec<Vec<u8>> {
    let mut c: Command = shell.command(script);
    c.env("LC_ALL", locale)
        .env_remove("ENV")
        .env_remove("BASH_ENV");
    let out = support::run(c);
    assert!(
        out.status.success(),
        "{} ({locale}) failed: {}\n{}",
        shell.name,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut parts: Vec<Vec<u8>> = out.stdout.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
    assert_eq!(
        parts.pop().as_deref(),
        Some(&b""[..]),
        "{}: output must end in NUL",
        shell.name
    );
    parts
}

fn check_round_trip(test: &str, shells: &[Shell], make_script: impl Fn(&[&String]) -> String) {
    let strings = all_strings();
    let dir = tempfile::tempdir().unwrap();
    for shell in shells {
        for locale in support::LOCALES {
            let chosen: Vec<&String> = strings
                .iter()
                .filter(|s| usable(shell, locale, s))
                .collect();
            if chosen.len() != strings.len() {
                support::loud(&format!(
                    "NOTE {test}: {} under {locale} skips {} non-ASCII strings (yash drops such bytes in the C locale)",
                    shell.name,
                    strings.len() - chosen.len()
                ));
            }
            let script = dir.path().join("t.sh");
            fs::write(&script, make_script(&chosen)).unwrap();
            let got = run_and_split(shell, &script, locale);
            assert_eq!(
                got.len(),
                chosen.len(),
                "{} ({locale}): wrong number of values",
                shell.name
            );
            for (want, have) in chosen.iter().zip(&got) {
                assert_eq!(
                    have.as_slice(),
                    want.as_bytes(),
                    "{} ({locale}) changed {want:?} into {:?}",
                    shell.name,
                    String::from_utf8_lossy(have)
                );
            }
        }
    }
    support::report(test, shells);
}

const PRINT: &str = "printf '%s' \"$v\"; printf '\\000'\n";

#[test]
fn quote_round_trips_under_every_shell() {
    check_round_trip(
        "quote_round_trips_under_every_shell",
        &support::posix_shells(),
        |strings| {
            let mut s = String::new();
            for v in strings {
                s.push_str(&format!("v={}\n{PRINT}", quote(v).unwrap()));
            }
            s
        },
    );
}

#[derive(Template)]
#[template(
    source = "{% for v in values %}v={{ v }}\nprintf '%s' \"$v\"; printf '\\000'\n{% endfor %}",
    ext = "sh"
)]
struct RoundTrip<'a> {
    values: &'a [Value],
}

#[test]
fn escaper_round_trips_under_every_shell() {
    check_round_trip(
        "escaper_round_trips_under_every_shell",
        &support::posix_shells(),
        |strings| {
            let values: Vec<Value> = strings
                .iter()
                .map(|s| Value::new(s.as_str()).unwrap())
                .collect();
            RoundTrip { values: &values }.render().unwrap()
        },
    );
}

fn params_file(json: &serde_json::Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("p.json");
    fs::write(&input, json.to_string()).unwrap();
    let mut c = Command::new(support::shforge());
    c.arg("params").arg(&input);
    let out = support::run(c);
    assert!(
        out.status.success(),
        "shforge params: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn params_scalars_round_trip_under_every_shell() {
    check_round_trip(
        "params_scalars_round_trip_under_every_shell",
        &support::posix_shells(),
        |strings| {
            let obj: serde_json::Map<String, serde_json::Value> = strings
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("P{i}"), serde_json::Value::from(s.as_str())))
                .collect();
            let mut script = params_file(&serde_json::Value::Object(obj));
            for i in 0..strings.len() {
                script.push_str(&format!("v=$P{i}\n{PRINT}"));
            }
            script
        },
    );
}

#[test]
fn params_arrays_round_trip_under_every_bash() {
    let bashes: Vec<Shell> = support::bashes()
        .into_iter()
        .filter(|s| s.kind == Kind::Bash)
        .collect();
    check_round_trip(
        "params_arrays_round_trip_under_every_bash",
        &bashes,
        |strings| {
            let arr: Vec<serde_json::Value> = strings
                .iter()
                .map(|s| serde_json::Value::from(s.as_str()))
                .collect();
            let mut script = params_file(&serde_json::json!({ "EMPTY": [], "ARR": arr }));
            script.push_str("[ \"${#EMPTY[@]}\" -eq 0 ] || exit 9\n");
            script
                .push_str("for v in \"${ARR[@]}\"; do printf '%s' \"$v\"; printf '\\000'; done\n");
            script
        },
    );
}

/// A value holding `'` is written `"…"` with only `"` `\\` `$` `` ` ``
/// escaped: one piece the shell reads in linear time, where `'\''` made
/// bash's cost grow faster than the length.
#[test]
fn params_quote_values_holding_single_quotes_with_double_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("p.json");
    fs::write(&input, r#"{"A":"it's","B":"'\"\\$`x","C":"no quote $x"}"#).unwrap();
    let mut c = Command::new(support::shforge());
    c.arg("params").arg(&input);
    let out = support::run(c);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "A=\"it's\"\nB=\"'\\\"\\\\\\$\\`x\"\nC='no quote $x'\n"
    );
}

#[test]
fn params_output_is_input_order_and_element_assignments() {
    // The JSON text is written by hand: its key order is what is tested.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("p.json");
    fs::write(&input, "{\"Z\":\"1\",\"A\":[\"x\\u0001y\",\"p\\u007fq\"]}").unwrap();
    let mut c = Command::new(support::shforge());
    c.arg("params").arg(&input);
    let out = support::run(c);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Z='1'\nA=()\nA[0]='x\u{1}y'\nA[1]='p\u{7f}q'\n"
    );
}
