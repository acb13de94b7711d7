//! The dialect guard: a static check that a script stays inside its dialect.
//!
//! `posix` scripts must run under dash, busybox sh, mksh, posh, yash, ksh93,
//! zsh's sh emulation and bash; `bash` scripts under every bash from 3.2 on.
//! Each [`Rule`] is a pattern over the script's *code* (see [`crate::lex`]: text
//! in quotes, comments and here-documents is masked first), with the reason
//! and what to write instead; the measurements behind them are in
//! `docs/portability.md`.
//!
//! A line may carry a reviewed exception, with a reason, either on the line
//! itself or on the line just above:
//! `# shforge-allow: RULE-ID because ...`.

use std::fmt;
use std::sync::LazyLock;

use regex::{Regex, RegexSet};

use crate::lex;

/// The dialect a script is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// POSIX `sh`: every shell of the matrix.
    Posix,
    /// bash 3.2 and every later release.
    Bash,
}

impl Dialect {
    /// The name used on the command line and in the manifest.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Posix => "posix",
            Dialect::Bash => "bash",
        }
    }

    /// The shebang line generated scripts of this dialect start with.
    pub fn shebang(self) -> &'static str {
        match self {
            Dialect::Posix => "#!/bin/sh",
            Dialect::Bash => "#!/usr/bin/env bash",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Dialect {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "posix" | "sh" => Ok(Dialect::Posix),
            "bash" => Ok(Dialect::Bash),
            _ => Err(format!("unknown dialect {s:?}: expected posix or bash")),
        }
    }
}

/// Which scripts a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Only `posix` scripts (bash has the construct since 3.2 or earlier).
    Posix,
    /// Both dialects: bash added it after 3.2, and POSIX never had it.
    Both,
    /// Both dialects, but only in scripts that turn on `set -u`.
    BothUnderNounset,
}

/// What a rule's pattern is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The line with quoted text and comments masked.
    Code,
    /// The line with comments masked but quoted text kept, only when
    /// `also_code` matches the code of the line too (for constructs that live
    /// inside a quoted string, like a printf format).
    TextWhenCode(&'static str),
}

/// One construct the guard refuses.
#[derive(Debug)]
pub struct Rule {
    /// Stable identifier, used in findings and in `shforge-allow` comments.
    pub id: &'static str,
    scope: Scope,
    target: Target,
    pattern: &'static str,
    /// The construct, as a reader would name it.
    pub construct: &'static str,
    /// Why it is out of bounds.
    pub why: &'static str,
    /// What to write instead.
    pub instead: &'static str,
}

/// Start of a simple command: start of line or after an operator or `{`/`(`.
const CMD: &str = r"(?:^|[;&|({!]\s*|\b(?:then|do|else|elif)\s+|^\s*)";

macro_rules! rule {
    ($id:literal, $scope:ident, $target:expr, $pat:expr, $construct:literal, $why:literal, $instead:literal) => {
        Rule {
            id: $id,
            scope: Scope::$scope,
            target: $target,
            pattern: $pat,
            construct: $construct,
            why: $why,
            instead: $instead,
        }
    };
}

/// Every rule of the guard.
pub static RULES: &[Rule] = &[
    // ---- POSIX sh: constructs that dash, posh, ksh93 or busybox lack -------
    rule!(
        "posix-double-bracket",
        Posix,
        Target::Code,
        r"(?:^|[\s;&|(!])\[\[(?:\s|$)",
        "[[ ... ]]",
        "dash and posh have no [[",
        "[ ... ] or case"
    ),
    rule!(
        "posix-array-assign",
        Posix,
        Target::Code,
        r"(?:^|[\s;&|(])[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=\(",
        "array assignment",
        "POSIX sh has no arrays",
        "\"$@\" with set --, or several variables"
    ),
    rule!(
        "posix-array-subscript",
        Posix,
        Target::Code,
        r"\$\{[#!]?[A-Za-z_][A-Za-z0-9_]*\[",
        "array subscript ${a[i]}",
        "POSIX sh has no arrays",
        "\"$@\" with set --"
    ),
    rule!(
        "posix-local",
        Posix,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)local(?:\s|$)",
        "local",
        "ksh93 has no local",
        "prefixed global names, or a subshell function body ( ... )"
    ),
    rule!(
        "posix-ansi-quote",
        Posix,
        Target::Code,
        r"\$'",
        "$'...'",
        "dash and posh print $'...' literally",
        "printf to build control characters"
    ),
    rule!(
        "posix-substring",
        Posix,
        Target::Code,
        r"\$\{[A-Za-z_0-9@*]+(?:\[[^]]*\])?:[^-=?+}]",
        "${x:offset:length}",
        "dash and posh have no substring expansion",
        "case patterns, or ${x#...}/${x%...}"
    ),
    rule!(
        "posix-pattern-substitution",
        Posix,
        Target::Code,
        r"\$\{[A-Za-z_0-9@*]+(?:\[[^]]*\])?/",
        "${x/pattern/replacement}",
        "dash and posh have no pattern substitution",
        "a loop over ${x%%...}/${x#...}, or sed"
    ),
    rule!(
        "posix-function-keyword",
        Posix,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)function\s+[A-Za-z_]",
        "function NAME",
        "not POSIX; dash rejects it",
        "NAME() { ...; }"
    ),
    rule!(
        "posix-source",
        Posix,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)source\s",
        "source FILE",
        "dash and posh have no source",
        ". FILE"
    ),
    rule!(
        "posix-test-double-equals",
        Posix,
        Target::Code,
        r"(?:^|[\s;&|(!])(?:\[|test)\s(?:[^]]*\s)?==(?:\s|$)",
        "== inside [ ] or test",
        "dash's test has no ==",
        "="
    ),
    rule!(
        "posix-echo-options",
        Posix,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)echo\s+-[A-Za-z]*[neE]",
        "echo -n / echo -e",
        "echo options and escapes differ between shells",
        "printf '%s\\n' or printf '%s'"
    ),
    rule!(
        "posix-pipefail",
        Posix,
        Target::Code,
        r"\bpipefail\b",
        "set -o pipefail",
        "dash and posh have no pipefail",
        "check each command's status, or a FIFO"
    ),
    rule!(
        "posix-here-string",
        Posix,
        Target::Code,
        r"<<<",
        "here-string <<<",
        "not POSIX",
        "a here-document or printf ... |"
    ),
    rule!(
        "posix-process-substitution",
        Posix,
        Target::Code,
        r"(?:^|[^$<>])[<>]\(",
        "process substitution <(...)",
        "not POSIX",
        "a temporary file or a FIFO"
    ),
    rule!(
        "posix-and-redirect",
        Posix,
        Target::Code,
        r"&>",
        "&> redirection",
        "not POSIX: dash runs the command in the background instead",
        ">file 2>&1"
    ),
    rule!(
        "posix-pipe-stderr",
        Posix,
        Target::Code,
        r"\|&",
        "|&",
        "not POSIX (ksh uses it for co-processes)",
        "2>&1 |"
    ),
    rule!(
        "posix-arith-command",
        Posix,
        Target::Code,
        r"(?:^|[\s;&|(!])\(\(",
        "(( ... ))",
        "not POSIX",
        "[ \"$((...))\" -ne 0 ], or x=$((...))"
    ),
    rule!(
        "posix-bash-builtins",
        Posix,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)(?:let|declare|typeset|shopt|select|pushd|popd|disown|complete)(?:\s|$)",
        "a bash/ksh builtin (let, declare, typeset, shopt, select, pushd, popd, disown)",
        "not in POSIX sh",
        "POSIX builtins: x=$((...)), plain assignment, cd"
    ),
    rule!(
        "posix-brace-expansion",
        Posix,
        Target::Code,
        r"(?:^|[^$\w{])\{[^{}\s$]*,[^{}\s]*\}",
        "brace expansion {a,b}",
        "dash and posh do not expand braces",
        "write the words out"
    ),
    rule!(
        "posix-brace-sequence",
        Posix,
        Target::Code,
        r"(?:^|[^$\w{])\{(?:-?\d+\.\.-?\d+(?:\.\.-?\d+)?|[A-Za-z]\.\.[A-Za-z])\}",
        "brace sequence {1..3}",
        "dash and posh do not expand braces",
        "a while loop with i=$((i + 1))"
    ),
    rule!(
        "posix-bash-variables",
        Posix,
        Target::Code,
        r"\$\{?(?:RANDOM|SECONDS|PIPESTATUS|FUNCNAME|BASH_[A-Z_]+|BASHPID|EPOCHREALTIME|EPOCHSECONDS|UID|EUID|OSTYPE|HOSTTYPE)\b",
        "a bash-only variable",
        "dash does not set it",
        "id -u, date +%s, or pass the value in"
    ),
    rule!(
        "posix-read-options",
        Posix,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)read\s+(?:-r\s+)?-[A-Za-z]*[adtnNsepi]",
        "read -a/-d/-t/-n/-s/-p",
        "POSIX read has only -r",
        "read -r, with IFS= for whole lines"
    ),
    rule!(
        "posix-printf-v",
        Posix,
        Target::Code,
        r"printf\s+-v",
        "printf -v",
        "not POSIX",
        "x=$(printf ...)"
    ),
    rule!(
        "posix-indirection",
        Posix,
        Target::Code,
        r"\$\{!",
        "${!name} indirection",
        "not POSIX",
        "a case over the known names"
    ),
    rule!(
        "posix-regex-match",
        Posix,
        Target::Code,
        r"\s=~\s",
        "=~",
        "not POSIX",
        "case patterns or grep"
    ),
    rule!(
        "posix-bash-trap",
        Posix,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)trap\s.*\s(?:ERR|DEBUG|RETURN)(?:\s|$)",
        "trap ... ERR/DEBUG/RETURN",
        "bash-only pseudo-signals",
        "check statuses explicitly; trap EXIT INT TERM HUP"
    ),
    // ---- bash 3.2 floor: features from bash 4.0 and later -------------------
    rule!(
        "bash32-assoc-array",
        Both,
        Target::Code,
        r"(?:declare|typeset|local)\s+(?:-[A-Za-z]+\s+)*-[A-Za-z]*A",
        "declare -A",
        "associative arrays need bash 4.0",
        "parallel indexed arrays, or a case on the key"
    ),
    rule!(
        "bash32-case-modification",
        Both,
        Target::Code,
        r"\$\{[A-Za-z_0-9@*]+(?:\[[^]]*\])?(?:,|\^)",
        "${x,,} / ${x^^}",
        "case modification needs bash 4.0",
        "tr, or a case"
    ),
    rule!(
        "bash32-mapfile",
        Both,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)(?:mapfile|readarray)(?:\s|$)",
        "mapfile / readarray",
        "needs bash 4.0",
        "while IFS= read -r line; do ...; done"
    ),
    rule!(
        "bash32-read-fractional-timeout",
        Both,
        Target::Code,
        r"read\s(?:.*\s)?-t\s*[0-9]*\.[0-9]",
        "read -t with a fraction",
        "fractional read timeouts need bash 4.0",
        "an integer read -t, or sleep"
    ),
    rule!(
        "bash32-read-new-options",
        Both,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)read\s+(?:-[A-Za-z]+\s+)*-[A-Za-z]*[Ni]",
        "read -N / read -i",
        "need bash 4.0/4.1",
        "read -r with IFS= and -d"
    ),
    rule!(
        "bash32-bashpid",
        Both,
        Target::Code,
        r"\$\{?BASHPID\b",
        "$BASHPID",
        "needs bash 4.0",
        "$$, or /proc/self/stat read by a builtin in the subshell"
    ),
    rule!(
        "bash32-case-fallthrough",
        Both,
        Target::Code,
        r";;&|(?:^|[^;]);&",
        "case ;& / ;;&",
        "needs bash 4.0",
        "duplicate the branch"
    ),
    rule!(
        "bash32-pipe-stderr",
        Both,
        Target::Code,
        r"\|&",
        "|&",
        "needs bash 4.0",
        "2>&1 |"
    ),
    rule!(
        "bash32-append-both",
        Both,
        Target::Code,
        r"&>>",
        "&>>",
        "needs bash 4.0",
        ">>file 2>&1"
    ),
    rule!(
        "bash32-coproc",
        Both,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)coproc(?:\s|$)",
        "coproc",
        "needs bash 4.0",
        "a FIFO (mkfifo)"
    ),
    rule!(
        "bash32-new-shopt",
        Both,
        Target::Code,
        r"shopt\s+-[su]\s+(?:.*\s)?(?:globstar|lastpipe|autocd|checkjobs|dirspell|direxpand|globasciiranges|inherit_errexit|localvar_inherit|localvar_unset|assoc_expand_once|compat\d+|patsub_replacement|varredir_close|noexpand_translation)\b",
        "a shopt option added after bash 3.2",
        "unknown to bash 3.2 (shopt fails)",
        "find instead of globstar; process substitution instead of lastpipe"
    ),
    rule!(
        "bash32-declare-new-attributes",
        Both,
        Target::Code,
        r"(?:declare|typeset|local)\s+(?:-[A-Za-z]+\s+)*-[A-Za-z]*[gnlu]",
        "declare -g / -n / -l / -u",
        "need bash 4.0-4.3",
        "plain assignment at top level; pass names; tr for case"
    ),
    rule!(
        "bash32-local-dash",
        Both,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)local\s+-(?:\s|$)",
        "local -",
        "needs bash 4.4",
        "save and restore options with set +o"
    ),
    rule!(
        "bash32-named-fd",
        Both,
        Target::Code,
        r"\{[A-Za-z_][A-Za-z0-9_]*\}[<>]",
        "{fd}> named descriptors",
        "need bash 4.1/4.2",
        "fixed descriptor numbers, closed for children (3>&-)"
    ),
    rule!(
        "bash32-printf-time",
        Both,
        Target::TextWhenCode(r"\bprintf\b"),
        r"%\([^)]*\)T",
        "printf '%(fmt)T'",
        "needs bash 4.2",
        "one date +%s at start plus $SECONDS"
    ),
    rule!(
        "bash32-negative-subscript",
        Both,
        Target::Code,
        r"\$\{[A-Za-z_][A-Za-z0-9_]*\[\s*-[0-9]",
        "${a[-1]}",
        "negative subscripts need bash 4.2",
        "${a[${#a[@]}-1]}"
    ),
    rule!(
        "bash32-negative-length",
        Both,
        Target::Code,
        r"\$\{[A-Za-z_][A-Za-z0-9_]*:[^:}]*:\s*-",
        "${x:off:-len}",
        "a negative length needs bash 4.2",
        "compute the length: ${x:off:${#x}-off-n}"
    ),
    rule!(
        "bash32-wait-options",
        Both,
        Target::Code,
        r"(?:^|[;&|({]\s*|\s)wait\s+-[A-Za-z]*[nfp]",
        "wait -n / -f / -p",
        "need bash 4.3 or later",
        "polling with kill -0"
    ),
    rule!(
        "bash32-test-v",
        Both,
        Target::Code,
        r"(?:\[\[|\[|test)\s+(?:!\s+)?-v\s",
        "-v NAME test",
        "needs bash 4.2",
        "${x+set}"
    ),
    rule!(
        "bash32-transform",
        Both,
        Target::Code,
        r"\$\{[A-Za-z_0-9@*]+(?:\[[^]]*\])?@[QEPAaKkUuL]\}",
        "${x@Q} and other @ operators",
        "need bash 4.4",
        "the quoting module at generation time; printf %q at run time"
    ),
    rule!(
        "bash32-epoch",
        Both,
        Target::Code,
        r"\$\{?(?:EPOCHREALTIME|EPOCHSECONDS|SRANDOM|BASH_ARGV0)\b",
        "$EPOCHREALTIME / $EPOCHSECONDS / $SRANDOM",
        "need bash 5.0 or later",
        "date +%s once, then $SECONDS"
    ),
    rule!(
        "bash32-brace-sequence-step",
        Both,
        Target::Code,
        r"\{-?\d+\.\.-?\d+\.\.-?\d+\}|\{-?0\d+\.\.-?\d+\}|\{-?\d+\.\.-?0\d+\}",
        "{a..b..step} or a zero-padded {01..10}",
        "need bash 4.0 (3.2 leaves the step form as it is and drops the zeros)",
        "a while loop with i=$((i + step)); printf '%02d'"
    ),
    rule!(
        "bash32-braced-at",
        Both,
        Target::Code,
        r"\$\{@\}",
        "\"${@}\"",
        "with no arguments under set -u, bash 3.2 fails on the braced form",
        "\"$@\""
    ),
    rule!(
        "bash32-unicode-escape",
        Both,
        Target::TextWhenCode(r"\$'"),
        r"\$'(?:[^'\\]|\\.)*\\[uU][0-9A-Fa-f]",
        "$'\\u...'",
        "needs bash 4.2",
        "the bytes themselves, or printf with octal escapes"
    ),
    rule!(
        "bash32-empty-array-nounset",
        BothUnderNounset,
        Target::Code,
        r#"(?:^|[^+"])\$\{[A-Za-z_][A-Za-z0-9_]*\[[@*]\]\}|(?:^|[^+])"\$\{[A-Za-z_][A-Za-z0-9_]*\[[@*]\]\}"#,
        "\"${a[@]}\" under set -u",
        "bash before 4.4 treats an empty array as unset",
        "${a[@]+\"${a[@]}\"}"
    ),
];

struct Compiled {
    rule: &'static Rule,
    re: Regex,
    also: Option<Regex>,
}

static COMPILED: LazyLock<Vec<Compiled>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|rule| Compiled {
            rule,
            re: Regex::new(rule.pattern).expect("rule pattern compiles"),
            also: match rule.target {
                Target::Code => None,
                Target::TextWhenCode(p) => Some(Regex::new(p).expect("rule pattern compiles")),
            },
        })
        .collect()
});

/// Every rule's pattern on the masked code (a `TextWhenCode` rule's code
/// pattern), in `COMPILED` order: one pass a line finds the rules that may
/// hit, instead of one search a rule (the debug build's tests generate
/// every script many times).
static ON_CODE: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new(
        COMPILED
            .iter()
            .map(|c| c.also.as_ref().unwrap_or(&c.re).as_str()),
    )
    .expect("rule patterns compile")
});

static NOUNSET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"{CMD}set\s+(?:-[A-Za-z]*u[A-Za-z]*|-o\s+nounset)\b"
    ))
    .expect("compiles")
});
static ALLOW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"#\s*shforge-allow:\s*([a-z0-9-]+)\s+\S").expect("compiles"));

/// One construct found outside the dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line number.
    pub line: usize,
    /// The rule that matched.
    pub rule: &'static str,
    /// The construct, why it is refused, and what to write instead.
    pub construct: &'static str,
    /// Why it is refused.
    pub why: &'static str,
    /// What to write instead.
    pub instead: &'static str,
}

impl Finding {
    /// `FILE:LINE: construct — why; write instead [rule]`.
    pub fn render(&self, file: &str) -> String {
        format!(
            "{file}:{}: {} \u{2014} {}; write {} instead [{}]",
            self.line, self.construct, self.why, self.instead, self.rule
        )
    }
}

/// Check `src` against `dialect`; findings in line order.
pub fn check(src: &str, dialect: Dialect) -> Vec<Finding> {
    let lexed = lex::lex(src);
    let masked = lexed.masked_lines(src);
    let raw: Vec<&str> = src.split('\n').collect();
    let uncommented = lexed.uncommented_lines(src);
    let nounset = masked.iter().any(|l| NOUNSET.is_match(l));
    let mut findings = Vec::new();
    for (n, code) in masked.iter().enumerate() {
        for i in ON_CODE.matches(code).iter() {
            let c = &COMPILED[i];
            let applies = match c.rule.scope {
                Scope::Posix => dialect == Dialect::Posix,
                Scope::Both => true,
                Scope::BothUnderNounset => nounset,
            };
            if !applies || allowed(&raw, n, c.rule.id) {
                continue;
            }
            // A `TextWhenCode` rule matched its code pattern; its own
            // pattern is on the line with the strings but not the comments.
            if c.also.is_none() || c.re.is_match(&uncommented[n]) {
                findings.push(Finding {
                    line: n + 1,
                    rule: c.rule.id,
                    construct: c.rule.construct,
                    why: c.rule.why,
                    instead: c.rule.instead,
                });
            }
        }
    }
    findings
}

/// A `# shforge-allow: RULE reason` comment on the line or the line above.
fn allowed(raw: &[&str], n: usize, id: &str) -> bool {
    let on = |line: &str| ALLOW.captures_iter(line).any(|c| &c[1] == id);
    on(raw[n]) || (n > 0 && raw[n - 1].trim_start().starts_with('#') && on(raw[n - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles_and_ids_are_unique() {
        assert_eq!(COMPILED.len(), RULES.len());
        let mut ids: Vec<_> = RULES.iter().map(|r| r.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    #[test]
    fn allow_comment_needs_a_reason() {
        let src =
            "echo \"${EPOCHREALTIME}\" # shforge-allow: bash32-epoch guarded by a version check\n";
        assert!(check(src, Dialect::Bash).is_empty());
        let src = "echo \"${EPOCHREALTIME}\" # shforge-allow: bash32-epoch\n";
        assert_eq!(check(src, Dialect::Bash).len(), 1);
    }

    // CASES: the integration tests' cases (`shforge lint` on each), shared.
    include!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/lint_cases.rs"
    ));

    #[test]
    fn every_rule_has_a_case() {
        for rule in RULES {
            assert!(
                CASES.iter().any(|c| c.0 == rule.id),
                "rule {} has no test case",
                rule.id
            );
        }
        for case in CASES {
            assert!(
                RULES.iter().any(|r| r.id == case.0),
                "case for unknown rule {}",
                case.0
            );
        }
    }

    #[test]
    fn library_check_agrees_with_cli() {
        assert!(check("[[ x ]]\n", Dialect::Posix).len() == 1);
        assert!(check("[[ x ]]\n", Dialect::Bash).is_empty());
    }

    #[test]
    fn constructs_in_a_trailing_comment_are_not_code() {
        for &(rule, dialect, bad, _) in CASES {
            if bad.contains('\n') {
                continue;
            }
            let dialect: Dialect = dialect.parse().unwrap();
            for code in [": ok", "printf '%s\\n' x", "echo \"$x\""] {
                let text = format!("{code} # {bad}\n");
                let findings = check(&text, dialect);
                assert!(
                    findings.is_empty(),
                    "{rule}: {text:?} gave {:?}",
                    findings.iter().map(|f| f.render("t")).collect::<Vec<_>>()
                );
            }
        }
    }
}
