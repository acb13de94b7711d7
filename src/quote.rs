//! Guaranteed quoting: every value that reaches a script becomes exactly one
//! shell word here, and nowhere else.
//!
//! Three types keep values and code apart:
//!
//! * [`Value`] is text that is *not yet* quoted (checked to hold no NUL). It is
//!   what templates and builders take; the askama `sh` escaper ([`ShEscaper`])
//!   quotes it when a template prints `{{ value }}`.
//! * [`Word`] is one quoted shell word, produced only here.
//! * [`Raw`] is shell code. It can only be built from a `'static` literal
//!   (code written by a developer in this crate), from words, or from other raw
//!   code — never from an arbitrary runtime `String`.
//!
//! One algorithm, [`quote`] and [`quote_value`] differing only in whether a
//! safe word may stay bare:
//!
//! * the empty string is `''`;
//! * a value made only of the conservative safe set `[A-Za-z0-9_./,:+@-]`
//!   stays bare ([`quote`] only);
//! * a value without `'` is single-quoted as it is: `'a b'`;
//! * a value holding `'` is double-quoted, with only `"`, `\`, `$` and
//!   `` ` `` escaped by a backslash: `"it's"`, `"a\"b\$c"`.
//!
//! Why not `'it'\''s'`: the shell reads each `'\''` as three more pieces of
//! one word, and bash's cost for that grows faster than the length (1 MiB of
//! `x'y` took 3 s to source on bash 5.2, 2 MiB 27 s). The double-quoted form
//! is one piece; it reads back byte for byte in every POSIX shell (a
//! backslash inside `"…"` is special only before `$`, `` ` ``, `"`, `\` and
//! newline, and a newline is never preceded by a lone backslash here).
//!
//! In particular `=`, `%`, `~`, `!`, `*`, `?`, `[`, `#`, blanks, newlines,
//! quotes and non-ASCII are always quoted. A NUL anywhere is an error: no
//! shell can hold it, and dropping it would silently change the value.

use std::fmt;

/// A value could not become a shell word.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuoteError {
    /// The value holds a NUL byte, which no shell variable or argument can carry.
    #[error("value {value:?} contains a NUL byte at offset {offset}; shells cannot hold NUL")]
    Nul {
        /// The offending value (Debug-escaped in the message).
        value: String,
        /// Byte offset of the first NUL.
        offset: usize,
    },
    /// A name did not pass its check.
    #[error(transparent)]
    Name(#[from] crate::names::NameError),
}

/// Characters that never need quoting in any shell, in any position.
///
/// `=` is left out because `FOO=bar` in command position is an assignment,
/// `%` because `%1` is a bash job spec.
fn is_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | ',' | ':' | '+' | '@' | '-')
}

/// Quote `value` as exactly one shell word.
///
/// ```
/// use shforge::quote::quote;
/// assert_eq!(quote("abc").unwrap().as_str(), "abc");
/// assert_eq!(quote("").unwrap().as_str(), "''");
/// assert_eq!(quote("FOO=bar").unwrap().as_str(), "'FOO=bar'");
/// assert_eq!(quote("it's").unwrap().as_str(), r#""it's""#);
/// assert_eq!(quote("'$x").unwrap().as_str(), r#""'\$x""#);
/// assert!(quote("a\0b").is_err());
/// ```
pub fn quote(value: &str) -> Result<Word, QuoteError> {
    check_nul(value)?;
    Ok(Word(quote_unchecked(value, true)))
}

/// Quote `value` as one shell word that is always quoted, even when it is
/// made of safe characters: the form for data on the right of an
/// assignment (`NAME='value'`), where a bare `NAME=ls` reads to shellcheck
/// (and to a reviewer) like a command.
///
/// ```
/// use shforge::quote::quote_value;
/// assert_eq!(quote_value("abc").unwrap().as_str(), "'abc'");
/// assert_eq!(quote_value("").unwrap().as_str(), "''");
/// assert_eq!(quote_value("it's").unwrap().as_str(), r#""it's""#);
/// ```
pub fn quote_value(value: &str) -> Result<Word, QuoteError> {
    check_nul(value)?;
    Ok(Word(quote_unchecked(value, false)))
}

/// The one quoting algorithm (see the module docs), for a value already
/// known to be NUL-free.
fn quote_unchecked(value: &str, bare_if_safe: bool) -> String {
    if bare_if_safe && !value.is_empty() && value.chars().all(is_safe) {
        return value.to_owned();
    }
    if !value.contains('\'') {
        return format!("'{value}'");
    }
    let mut out = String::with_capacity(value.len() + value.len() / 8 + 2);
    out.push('"');
    for c in value.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn check_nul(value: &str) -> Result<(), QuoteError> {
    match value.find('\0') {
        Some(offset) => Err(QuoteError::Nul {
            value: value.to_owned(),
            offset,
        }),
        None => Ok(()),
    }
}

/// Exactly one shell word, already quoted. Only [`quote`] makes one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Word(String);

impl Word {
    /// The quoted text, ready to paste into a script.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Text that will be quoted when it reaches a script: NUL-free by construction.
///
/// Its `Display` writes the whole value in one `write_str` call, also when it
/// is empty, so the askama escaper sees it as one chunk and prints `''` for
/// the empty value instead of nothing.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(String);

impl Value {
    /// Check `s` and keep it as a value.
    pub fn new(s: impl Into<String>) -> Result<Self, QuoteError> {
        let s = s.into();
        check_nul(&s)?;
        Ok(Value(s))
    }

    /// Render any `Display` to one string first, then check it. Use this for
    /// types whose `Display` writes in several pieces.
    pub fn display(d: &dyn fmt::Display) -> Result<Self, QuoteError> {
        Self::new(d.to_string())
    }

    /// The unquoted text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value as one quoted word (bare when made of safe characters).
    pub fn word(&self) -> Word {
        Word(quote_unchecked(&self.0, true))
    }

    /// The value as one word that is always quoted (what the template
    /// escaper prints).
    pub fn quoted(&self) -> Word {
        Word(quote_unchecked(&self.0, false))
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Shell code, trusted as written. Built from `'static` literals, quoted
/// words and other raw code; templates print it with the `raw` filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Raw(String);

impl Raw {
    /// Code written in this crate's source.
    pub fn code(code: &'static str) -> Self {
        Raw(code.to_owned())
    }

    /// Append more code.
    pub fn push(&mut self, code: &Raw) -> &mut Self {
        self.0.push_str(&code.0);
        self
    }

    /// Append a literal piece of code.
    pub fn push_code(&mut self, code: &'static str) -> &mut Self {
        self.0.push_str(code);
        self
    }

    /// Append one quoted word.
    pub fn push_word(&mut self, word: &Word) -> &mut Self {
        self.0.push_str(&word.0);
        self
    }

    /// The code.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Take the code out (for writing it to a file).
    pub fn into_string(self) -> String {
        self.0
    }
}

impl From<Word> for Raw {
    fn from(w: Word) -> Self {
        Raw(w.0)
    }
}

impl fmt::Display for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A simple command line: a command name and its words, with `--` before the
/// operands when one of them could be taken for an option.
#[derive(Debug, Clone)]
pub struct CommandLine {
    words: Vec<Word>,
    operands: Vec<Word>,
    dashdash: bool,
}

impl CommandLine {
    /// Start a command line. The program name must be a plain safe word
    /// (`apk`, `/usr/bin/env`): a quoted or `%`-leading word in command
    /// position would not mean what it says.
    pub fn new(program: &str) -> Result<Self, QuoteError> {
        let word = quote(program)?;
        Ok(CommandLine {
            words: vec![word],
            operands: Vec::new(),
            dashdash: false,
        })
    }

    /// Add an option or option argument (written before `--`).
    pub fn arg(mut self, arg: &str) -> Result<Self, QuoteError> {
        self.words.push(quote(arg)?);
        Ok(self)
    }

    /// Add an operand (a file, a package name). When any operand starts with
    /// `-`, the operands are preceded by `--`.
    pub fn operand(mut self, operand: &str) -> Result<Self, QuoteError> {
        self.dashdash |= operand.starts_with('-');
        self.operands.push(quote(operand)?);
        Ok(self)
    }

    /// The command as shell code.
    pub fn to_raw(&self) -> Raw {
        let mut parts: Vec<&str> = self.words.iter().map(Word::as_str).collect();
        if self.dashdash {
            parts.push("--");
        }
        parts.extend(self.operands.iter().map(Word::as_str));
        Raw(parts.join(" "))
    }
}

/// The askama escaper registered for `.sh` and `.bash` templates (see
/// `askama.toml`): every `{{ expr }}` becomes one quoted shell word,
/// so a value in a template always reads as data (`unpack='file'`, never a
/// bare `unpack=file` that looks like a command).
///
/// askama calls it once per `write_str` of the value's `Display`; template
/// fields are [`Value`]s, which write once, so each expression is one word.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShEscaper;

impl askama::filters::Escaper for ShEscaper {
    fn write_escaped_str<W: fmt::Write>(&self, mut dest: W, string: &str) -> fmt::Result {
        // A NUL cannot be reported from here with a message: Values are
        // checked when made, so one reaching this point is a bug.
        if string.contains('\0') {
            return Err(fmt::Error);
        }
        dest.write_str(&quote_unchecked(string, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_quoted_characters() {
        for s in [
            "=", "FOO=bar", "%1", "~", "~root", "!", "a*", "?", "[a]", "#x", "a b", "a\nb", "'",
            "\"", "é", "a\tb", "\r", "{a,b}", "$x", "`x`", "a;b", "a&b", "a|b", "(", ")", "<", ">",
            "\\", "^",
        ] {
            let w = quote(s).unwrap();
            assert!(
                w.as_str().starts_with('\'') || w.as_str().starts_with('"'),
                "{s:?} came out as {w}"
            );
        }
    }

    #[test]
    fn safe_words_stay_bare() {
        for s in [
            "abc",
            "/usr/bin/env",
            "a-b_c.d",
            "x86_64",
            "1.2.3+4",
            "user@host:path",
            "-n",
        ] {
            assert_eq!(quote(s).unwrap().as_str(), s);
        }
    }

    #[test]
    fn empty_is_two_quotes() {
        assert_eq!(quote("").unwrap().as_str(), "''");
        assert_eq!(Value::new("").unwrap().word().as_str(), "''");
    }

    #[test]
    fn nul_is_an_error_naming_the_value() {
        let err = quote("ab\0c").unwrap_err();
        assert_eq!(
            err,
            QuoteError::Nul {
                value: "ab\0c".into(),
                offset: 2
            }
        );
        assert!(err.to_string().contains("ab\\0c"), "{err}");
        assert!(Value::new("\0").is_err());
    }

    #[test]
    fn values_with_single_quotes_are_double_quoted() {
        assert_eq!(quote("it's").unwrap().as_str(), r#""it's""#);
        assert_eq!(
            quote_value("'\"\\$`!x").unwrap().as_str(),
            r#""'\"\\\$\`!x""#
        );
        assert_eq!(quote_value("a b").unwrap().as_str(), "'a b'");
        assert_eq!(Value::new("'").unwrap().quoted().as_str(), r#""'""#);
    }

    #[test]
    fn command_line_adds_dashdash_before_dash_operands() {
        let c = CommandLine::new("apk")
            .unwrap()
            .arg("add")
            .unwrap()
            .arg("--no-cache")
            .unwrap();
        assert_eq!(
            c.clone().operand("bash").unwrap().to_raw().as_str(),
            "apk add --no-cache bash"
        );
        assert_eq!(
            c.operand("bash")
                .unwrap()
                .operand("-evil")
                .unwrap()
                .to_raw()
                .as_str(),
            "apk add --no-cache -- bash -evil"
        );
    }
}

/// askama filters for shell templates. `{{ code|raw }}` is the only way to
/// print unquoted text, and it only takes shell code: [`Raw`], or an unsigned
/// integer (digits are always safe code, e.g. an array index).
#[allow(missing_docs)] // askama's filter_fn adds a builder type and method of its own
pub mod filters {
    use super::Raw;
    use askama::filters::Safe;

    /// Types whose text is shell code as it stands. Sealed: implemented
    /// only here.
    pub trait ShellCode: private::Sealed {
        /// The code.
        fn shell_code(&self) -> String;
    }

    mod private {
        pub trait Sealed {}
        impl Sealed for super::Raw {}
        impl Sealed for usize {}
        impl Sealed for u32 {}
        impl Sealed for u64 {}
        impl<T: Sealed + ?Sized> Sealed for &T {}
    }

    impl ShellCode for Raw {
        fn shell_code(&self) -> String {
            self.0.clone()
        }
    }

    macro_rules! unsigned {
        ($($t:ty),*) => {$(
            impl ShellCode for $t {
                fn shell_code(&self) -> String {
                    self.to_string()
                }
            }
        )*};
    }
    unsigned!(usize, u32, u64);

    impl<T: ShellCode + ?Sized> ShellCode for &T {
        fn shell_code(&self) -> String {
            (**self).shell_code()
        }
    }

    /// Print shell code as it is: the one filter templates may use.
    #[askama::filter_fn]
    pub fn raw<T: ShellCode>(code: T, _: &dyn askama::Values) -> askama::Result<Safe<String>> {
        Ok(Safe(code.shell_code()))
    }
}
