//! Lint for the askama shell templates themselves.
//!
//! The sh escaper quotes every `{{ expr }}` as one word, but it cannot see
//! where the word lands. These positions produce wrong text and are refused:
//! inside single or double quotes, inside a here-document, inside a comment
//! and inside `${…}`. Also refused: `|safe` (raw code goes only through the
//! typed `|raw` filter), any other filter (a `|join` makes one word of many),
//! and a template whose last extension is not `sh` or `bash` (`x.sh.j2` would
//! get askama's HTML escaper).
//!
//! Template comments are `<%# … #%>` (askama.toml): askama's default `{#`
//! would open a comment inside the shell's `${#x}`.

use std::path::{Path, PathBuf};

use crate::lex::{self, Class};

/// One problem in a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateFinding {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Check a template's file name.
pub fn check_name(name: &str) -> Option<String> {
    let ext = name.rsplit_once('.').map(|(_, e)| e);
    match ext {
        Some("sh" | "bash") => None,
        _ => Some(format!(
            "{name}: a shell template's last extension must be .sh or .bash (askama picks the escaper by it)"
        )),
    }
}

/// Check a template's text.
pub fn check(src: &str) -> Vec<TemplateFinding> {
    let mut out = Vec::new();
    let (shell, exprs) = strip_askama(src);
    let lexed = lex::lex(&shell);
    for (start, inner) in exprs {
        let line = src[..start].matches('\n').count() + 1;
        let filters: Vec<&str> = inner.split('|').skip(1).map(str::trim).collect();
        for f in &filters {
            let name = f.split('(').next().unwrap_or(f).trim();
            if name != "raw" {
                out.push(TemplateFinding {
                    line,
                    message: format!(
                        "filter `{name}` in `{{{{ {} }}}}`: only |raw (on the Raw type) is allowed; print values plainly so the escaper quotes them",
                        inner.trim()
                    ),
                });
            }
        }
        let where_ = match lexed.classes[start] {
            Class::Code => None,
            Class::Quoted => Some("inside a quoted string"),
            Class::Comment => Some("inside a comment"),
            Class::HereDoc => Some("inside a here-document"),
            Class::Expansion => Some("inside a ${...} expansion"),
        };
        if let Some(where_) = where_ {
            out.push(TemplateFinding {
                line,
                message: format!(
                    "`{{{{ {} }}}}` {where_}: the escaper's quotes would end up in the text; assign it to a variable in code first",
                    inner.trim()
                ),
            });
        }
    }
    out
}

/// Lint every file under `dir` (recursively, in path order): its name, its
/// text, and that it is ASCII (a generated script must be: yash drops other
/// bytes under the C locale, see `docs/portability.md`). Each problem is one
/// line, `DIR/REL:LINE: message`.
///
/// Each file is read with [`crate::files::read_bounded`]: a FIFO or device
/// under DIR is refused at once, never waited on.
pub fn check_dir(dir: &Path) -> Result<Vec<String>, crate::files::FileError> {
    let mut files = Vec::new();
    walk(dir, &mut files).map_err(|source| crate::files::FileError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    files.sort();
    let mut problems = Vec::new();
    for path in &files {
        let shown = path.display();
        let rel = path.strip_prefix(dir).unwrap_or(path).display().to_string();
        if let Some(p) = check_name(&rel) {
            problems.push(format!("{shown}: {p}"));
        }
        let bytes = crate::files::read_bounded(path, crate::files::Bound::TEMPLATE)?;
        let text = String::from_utf8_lossy(&bytes);
        if let Some(n) = text.lines().position(|l| !l.is_ascii()) {
            problems.push(format!(
                "{shown}:{}: non-ASCII text; generated scripts must be ASCII",
                n + 1
            ));
        }
        for f in check(&text) {
            problems.push(format!("{shown}:{}: {}", f.line, f.message));
        }
    }
    Ok(problems)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// Replace askama syntax with shell-neutral text of the same length:
/// `{% … %}` and `<%# … #%>` become blanks, `{{ … }}` becomes a word of `Z`s.
/// Returns the shell text and each expression's start and inner text.
fn strip_askama(src: &str) -> (String, Vec<(usize, String)>) {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut exprs = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        let (open, close): (&[u8], &[u8]) = match &b[i..] {
            [b'{', b'{', ..] => (b"{{", b"}}"),
            [b'{', b'%', ..] => (b"{%", b"%}"),
            [b'<', b'%', b'#', ..] => (b"<%#", b"#%>"),
            _ => {
                i += 1;
                continue;
            }
        };
        let from = i + open.len();
        let end = b[from..]
            .windows(close.len())
            .position(|w| w == close)
            .map_or(b.len(), |p| from + p + close.len());
        let fill = if close == b"}}" { b'Z' } else { b' ' };
        for (k, byte) in out[i..end].iter_mut().enumerate() {
            if b[i + k] != b'\n' {
                *byte = fill;
            }
        }
        if close == b"}}" {
            let inner = src[i + 2..end.saturating_sub(2).max(i + 2)]
                .trim_matches('-')
                .to_owned();
            exprs.push((i, inner));
        }
        i = end;
    }
    (String::from_utf8_lossy(&out).into_owned(), exprs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(src: &str) -> Vec<String> {
        check(src)
            .into_iter()
            .map(|f| format!("{}: {}", f.line, f.message))
            .collect()
    }

    #[test]
    fn plain_positions_pass() {
        let src = "{% if x %}\nfoo {{ a }} --bar={{ b }}\n{% endif %}\nx={{ c }}\n$(foo {{ d }})\n{{ code|raw }}\n";
        assert_eq!(messages(src), Vec::<String>::new());
    }

    #[test]
    fn quoted_heredoc_comment_and_expansion_positions_fail() {
        for (src, want) in [
            ("echo \"{{ a }}\"\n", "inside a quoted string"),
            ("echo '{{ a }}'\n", "inside a quoted string"),
            ("# {{ a }}\n", "inside a comment"),
            ("cat <<EOF\n{{ a }}\nEOF\n", "inside a here-document"),
            ("cat <<'EOF'\n{{ a }}\nEOF\n", "inside a here-document"),
            ("x=${y:-{{ a }}}\n", "inside a ${...} expansion"),
        ] {
            let m = messages(src);
            assert!(m.len() == 1 && m[0].contains(want), "{src:?}: {m:?}");
        }
    }

    #[test]
    fn length_expansions_are_shell_and_comments_are_blank() {
        assert_eq!(messages("n=${#x}\n"), Vec::<String>::new());
        // A `{{ }}` inside a template comment is not emitted, so not checked;
        // the one after it is, in code position.
        assert_eq!(
            messages("<%# echo \"{{ a }}\" #%>\nx={{ b }}\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn filters_other_than_raw_fail() {
        assert_eq!(messages("{{ a|safe }}\n").len(), 1);
        assert_eq!(messages("{{ a|join(\" \") }}\n").len(), 1);
        assert!(messages("{{ a|raw }}\n").is_empty());
    }

    #[test]
    fn names() {
        assert!(check_name("x.sh").is_none());
        assert!(check_name("lib/x.bash").is_none());
        assert!(check_name("x.sh.j2").is_some());
        assert!(check_name("x").is_some());
    }

    #[test]
    fn the_lint_catches_each_trap_position() {
        let bad = [
            ("echo \"{{ v }}\"", "quoted string"),
            ("# {{ v }}", "comment"),
            ("cat <<EOF\n{{ v }}\nEOF", "here-document"),
            ("{{ v|safe }}", "filter `safe`"),
            ("{{ v|join(\" \") }}", "filter `join`"),
        ];
        for (src, want) in bad {
            let found = check(src);
            assert!(
                found.iter().any(|f| f.message.contains(want)),
                "{src:?}: {found:?}"
            );
        }
        assert!(check_name("x.sh.j2").is_some());
    }
}
