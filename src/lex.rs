//! A small shell lexer that tells code from text.
//!
//! It does not parse shell: it classifies every byte of a script as code,
//! quoted text, comment or here-document body, which is what the dialect
//! guard and the template lint need to know (a `[[` inside a string or a
//! comment is not a `[[`). It understands single, double and `$'…'` quotes,
//! backslash escapes, `$(…)`, `${…}`, backticks, comments at word starts and
//! here-documents (`<<`, `<<-`, quoted and unquoted delimiters).

/// What a byte of the script is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Shell code, including the quote characters themselves and `$(…)`.
    Code,
    /// A parameter expansion (`$x`, `${…}`), inside or outside double quotes.
    Expansion,
    /// Literal text inside quotes.
    Quoted,
    /// A comment, from `#` to the end of the line.
    Comment,
    /// The body (or closing delimiter) of a here-document.
    HereDoc,
}

/// One byte per input byte: the classification of a whole script.
#[derive(Debug)]
pub struct Lexed {
    /// `classes[i]` is the class of byte `i` of the input.
    pub classes: Vec<Class>,
}

impl Lexed {
    /// The input with every byte that is not code or expansion replaced by
    /// `_` (newlines are kept), split into lines. Rules match against this.
    pub fn masked_lines(&self, src: &str) -> Vec<String> {
        self.mask(src, |c| matches!(c, Class::Code | Class::Expansion))
    }

    /// The input with comments and here-document bodies replaced by `_`
    /// (newlines are kept), split into lines: code and quoted text, for
    /// rules about what a string means to the command that gets it (a
    /// `printf` format), which must not see a trailing comment.
    pub fn uncommented_lines(&self, src: &str) -> Vec<String> {
        self.mask(src, |c| !matches!(c, Class::Comment | Class::HereDoc))
    }

    fn mask(&self, src: &str, keep: impl Fn(Class) -> bool) -> Vec<String> {
        let masked: Vec<u8> = src
            .bytes()
            .zip(&self.classes)
            .map(|(b, &c)| match c {
                _ if b == b'\n' => b'\n',
                c if keep(c) => b,
                _ => b'_',
            })
            .collect();
        String::from_utf8_lossy(&masked)
            .split('\n')
            .map(str::to_owned)
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Top-level code.
    Top,
    /// Inside `$(`: ends at the `)` that closes it; the field counts nested `(`.
    Subst(u32),
    /// Inside backticks.
    Backtick,
    /// Inside `${`: the field counts nested `{`.
    Param(u32),
    /// Inside `"…"`.
    Double,
    /// Inside `'…'`.
    Single,
    /// Inside `$'…'`.
    Ansi,
    /// An unquoted here-document body line: like `"…"` without the closing quote.
    HereBody,
}

impl Ctx {
    fn is_code(self) -> bool {
        matches!(self, Ctx::Top | Ctx::Subst(_) | Ctx::Backtick)
    }
}

struct PendingHeredoc {
    delimiter: Vec<u8>,
    strip_tabs: bool,
    quoted: bool,
}

/// Classify every byte of `src`.
pub fn lex(src: &str) -> Lexed {
    let b = src.as_bytes();
    let mut classes = vec![Class::Code; b.len()];
    let mut stack = vec![Ctx::Top];
    let mut pending: Vec<PendingHeredoc> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let ctx = *stack.last().expect("stack never empty");
        let c = b[i];
        if c == b'\n' && !pending.is_empty() {
            i = skip_heredocs(b, i + 1, &mut pending, &mut classes);
            continue;
        }
        match ctx {
            Ctx::Single => {
                if c == b'\'' {
                    stack.pop();
                } else {
                    classes[i] = Class::Quoted;
                }
                i += 1;
            }
            Ctx::Ansi => {
                if c == b'\\' && i + 1 < b.len() {
                    classes[i] = Class::Quoted;
                    classes[i + 1] = Class::Quoted;
                    i += 2;
                    continue;
                }
                if c == b'\'' {
                    stack.pop();
                } else {
                    classes[i] = Class::Quoted;
                }
                i += 1;
            }
            Ctx::Double | Ctx::HereBody => {
                let literal = if ctx == Ctx::HereBody {
                    Class::HereDoc
                } else {
                    Class::Quoted
                };
                match c {
                    b'\\' => {
                        classes[i] = literal;
                        if i + 1 < b.len() && b[i + 1] != b'\n' {
                            classes[i + 1] = literal;
                        }
                        i += 2;
                    }
                    b'"' if ctx == Ctx::Double => {
                        stack.pop();
                        i += 1;
                    }
                    b'$' | b'`' => i = open_expansion(b, i, &mut stack, &mut classes),
                    _ => {
                        classes[i] = literal;
                        i += 1;
                    }
                }
            }
            Ctx::Top | Ctx::Subst(_) | Ctx::Backtick | Ctx::Param(_) => {
                i = step_code(b, i, ctx, &mut stack, &mut classes, &mut pending);
            }
        }
    }
    Lexed { classes }
}

/// One step in code (or inside `${…}`): returns the next index.
fn step_code(
    b: &[u8],
    i: usize,
    ctx: Ctx,
    stack: &mut Vec<Ctx>,
    classes: &mut [Class],
    pending: &mut Vec<PendingHeredoc>,
) -> usize {
    let class = if let Ctx::Param(_) = ctx {
        Class::Expansion
    } else {
        Class::Code
    };
    classes[i] = class;
    let c = b[i];
    match c {
        b'\\' => {
            if i + 1 < b.len() {
                classes[i + 1] = class;
            }
            i + 2
        }
        b'\'' => {
            // Inside "${x#'a'}" a single quote is literal; elsewhere it quotes.
            if !(matches!(ctx, Ctx::Param(_)) && stack.contains(&Ctx::Double)) {
                stack.push(Ctx::Single);
            }
            i + 1
        }
        b'"' => {
            stack.push(Ctx::Double);
            i + 1
        }
        b'$' | b'`' => open_expansion(b, i, stack, classes),
        b'#' if ctx.is_code() && at_word_start(b, i) => {
            let mut j = i;
            while j < b.len() && b[j] != b'\n' {
                classes[j] = Class::Comment;
                j += 1;
            }
            j
        }
        // A here-string `<<<` is not a here-document.
        b'<' if b.get(i + 1) == Some(&b'<') && b.get(i + 2) == Some(&b'<') => i + 3,
        b'<' if ctx.is_code() && b.get(i + 1) == Some(&b'<') => {
            classes[i + 1] = class;
            match parse_heredoc_op(b, i + 2) {
                Some((doc, next)) => {
                    pending.push(doc);
                    next
                }
                None => i + 2,
            }
        }
        b'(' => {
            if let Some(Ctx::Subst(depth)) = stack.last_mut() {
                *depth += 1;
            }
            i + 1
        }
        b')' => {
            match stack.last_mut() {
                Some(Ctx::Subst(0)) => {
                    stack.pop();
                }
                Some(Ctx::Subst(depth)) => *depth -= 1,
                _ => {}
            }
            i + 1
        }
        b'{' => {
            if let Some(Ctx::Param(depth)) = stack.last_mut() {
                *depth += 1;
            }
            i + 1
        }
        b'}' => {
            match stack.last_mut() {
                Some(Ctx::Param(0)) => {
                    stack.pop();
                }
                Some(Ctx::Param(depth)) => *depth -= 1,
                _ => {}
            }
            i + 1
        }
        _ => i + 1,
    }
}

/// At a `$` or backtick: open `$(`, `${`, `$'`, a backtick or a plain `$name`.
fn open_expansion(b: &[u8], i: usize, stack: &mut Vec<Ctx>, classes: &mut [Class]) -> usize {
    let in_double = matches!(stack.last(), Some(Ctx::Double | Ctx::HereBody));
    if b[i] == b'`' {
        classes[i] = Class::Code;
        if stack.last() == Some(&Ctx::Backtick) {
            stack.pop();
        } else {
            stack.push(Ctx::Backtick);
        }
        return i + 1;
    }
    match b.get(i + 1) {
        Some(b'(') => {
            classes[i] = Class::Code;
            classes[i + 1] = Class::Code;
            stack.push(Ctx::Subst(0));
            i + 2
        }
        Some(b'{') => {
            classes[i] = Class::Expansion;
            classes[i + 1] = Class::Expansion;
            stack.push(Ctx::Param(0));
            i + 2
        }
        Some(b'\'') if !in_double => {
            classes[i] = Class::Code;
            classes[i + 1] = Class::Code;
            stack.push(Ctx::Ansi);
            i + 2
        }
        Some(&n) if n.is_ascii_alphanumeric() || b"_@*#?$!-".contains(&n) => {
            classes[i] = Class::Expansion;
            let mut j = i + 1;
            if n.is_ascii_alphabetic() || n == b'_' {
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    classes[j] = Class::Expansion;
                    j += 1;
                }
            } else {
                classes[j] = Class::Expansion;
                j += 1;
            }
            j
        }
        _ => {
            classes[i] = if in_double {
                Class::Quoted
            } else {
                Class::Code
            };
            i + 1
        }
    }
}

fn at_word_start(b: &[u8], i: usize) -> bool {
    i == 0
        || matches!(
            b[i - 1],
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')'
        )
}

/// After `<<`: an optional `-`, blanks, then the delimiter word.
fn parse_heredoc_op(b: &[u8], mut i: usize) -> Option<(PendingHeredoc, usize)> {
    let strip_tabs = b.get(i) == Some(&b'-');
    if strip_tabs {
        i += 1;
    }
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let mut delimiter = Vec::new();
    let mut quoted = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'\'' | b'"' => {
                quoted = true;
                let end = b[i + 1..].iter().position(|&x| x == c)? + i + 1;
                delimiter.extend_from_slice(&b[i + 1..end]);
                i = end + 1;
            }
            b'\\' => {
                quoted = true;
                delimiter.extend(b.get(i + 1));
                i += 2;
            }
            c if c.is_ascii_whitespace() || b";&|<>()".contains(&c) => break,
            c => {
                delimiter.push(c);
                i += 1;
            }
        }
    }
    (!delimiter.is_empty()).then_some((
        PendingHeredoc {
            delimiter,
            strip_tabs,
            quoted,
        },
        i,
    ))
}

/// Classify the bodies of pending here-documents, which start at `start`.
/// Returns the index after the last delimiter line.
fn skip_heredocs(
    b: &[u8],
    start: usize,
    pending: &mut Vec<PendingHeredoc>,
    classes: &mut [Class],
) -> usize {
    let mut i = start;
    for doc in pending.drain(..) {
        while i < b.len() {
            let end = b[i..]
                .iter()
                .position(|&x| x == b'\n')
                .map_or(b.len(), |p| i + p);
            let line = &b[i..end];
            let line = if doc.strip_tabs {
                let tabs = line.iter().take_while(|&&x| x == b'\t').count();
                &line[tabs..]
            } else {
                line
            };
            let is_end = line == doc.delimiter.as_slice();
            if doc.quoted || is_end {
                classes[i..end].fill(Class::HereDoc);
            } else {
                let sub = std::str::from_utf8(&b[i..end]).map(lex_here_body);
                match sub {
                    Ok(sub) => classes[i..end].copy_from_slice(&sub),
                    Err(_) => classes[i..end].fill(Class::HereDoc),
                }
            }
            i = end + 1;
            if is_end {
                break;
            }
        }
    }
    i.min(b.len())
}

/// An unquoted here-document line: text, with `$…` and backticks expanded.
fn lex_here_body(line: &str) -> Vec<Class> {
    let b = line.as_bytes();
    let mut classes = vec![Class::HereDoc; b.len()];
    let mut stack = vec![Ctx::Top, Ctx::HereBody];
    let mut pending = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let ctx = *stack.last().expect("stack never empty");
        i = match ctx {
            Ctx::HereBody => match b[i] {
                b'\\' => i + 2,
                b'$' | b'`' => open_expansion(b, i, &mut stack, &mut classes),
                _ => i + 1,
            },
            Ctx::Single | Ctx::Double | Ctx::Ansi => {
                // Quotes inside an expansion in a here-document: keep it simple
                // and treat the rest of the line as text.
                break;
            }
            _ => step_code(b, i, ctx, &mut stack, &mut classes, &mut pending),
        };
    }
    classes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(src: &str) -> String {
        lex(src).masked_lines(src).join("\n")
    }

    #[test]
    fn quotes_and_comments_are_masked() {
        assert_eq!(masked("echo '[[ x ]]' # [[ y"), "echo '_______' ______");
        assert_eq!(masked(r#"echo "a $b [[""#), r#"echo "__$b___""#);
        assert_eq!(masked(r#"x="${y:-"q"}""#), r#"x="${y:-"_"}""#);
        assert_eq!(masked("echo $'a\\'b' [["), "echo $'____' [[");
    }

    #[test]
    fn uncommented_keeps_quoted_text_and_drops_comments() {
        let src = "printf '%s\\n' x # printf '%(%s)T' -1\ncat <<E\n[[\nE";
        assert_eq!(
            lex(src).uncommented_lines(src),
            [
                "printf '%s\\n' x ____________________",
                "cat <<E",
                "__",
                "_"
            ]
        );
    }

    #[test]
    fn hash_inside_words_is_not_a_comment() {
        assert_eq!(masked("echo ${#x} a#b $#"), "echo ${#x} a#b $#");
    }

    #[test]
    fn command_substitution_inside_quotes_is_code() {
        assert_eq!(
            masked(r#"x="$(foo "a" [[ b)" c"#),
            r#"x="$(foo "_" [[ b)" c"#
        );
        assert_eq!(masked("x=\"`foo [[`\""), "x=\"`foo [[`\"");
    }

    #[test]
    fn heredocs() {
        let src = "cat <<EOF\n[[ $x\nEOF\n[[ a\ncat <<'X' >f\n$y [[\nX\ndone";
        assert_eq!(
            masked(src),
            "cat <<EOF\n___$x\n___\n[[ a\ncat <<'X' >f\n_____\n_\ndone"
        );
        let src = "cat <<-\tEOF\n\t[[\n\tEOF\n[[";
        assert_eq!(masked(src), "cat <<-\tEOF\n___\n____\n[[");
    }

    #[test]
    fn here_string_is_not_a_heredoc() {
        assert_eq!(masked("cat <<< x\n[["), "cat <<< x\n[[");
    }
}
