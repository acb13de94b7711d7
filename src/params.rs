//! `shell_assignments`: a JSON object of strings and string arrays becomes a
//! parameter file that bash 3.2 and later can source.
//!
//! Scalars are `NAME='value'` (always quoted, by [`quote::quote_value`]: a
//! value holding `'` is written `NAME="…"` instead, which every shell reads
//! in linear time). Arrays are `NAME=()` followed by one
//! `NAME[i]='value'` line per element: the compound `NAME=('a' 'b')` form
//! corrupts the bytes `\001` and `\177` on bash 3.2, element assignments do
//! not. Keys keep their input order.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};

use crate::names::VarName;
use crate::quote::{self, Raw};

/// Why a parameter object was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    /// Not valid JSON, or not an object.
    #[error("params: {0}")]
    Json(String),
    /// The key is not a shell variable name.
    #[error("params: key {0:?} is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)")]
    BadName(String),
    /// The key appears twice.
    #[error("params: key {0:?} appears more than once")]
    Duplicate(String),
    /// The value has a type that is not a string or an array of strings.
    #[error("params: key {key:?}: {found} is not allowed; values are strings or arrays of strings")]
    BadType {
        /// The key.
        key: String,
        /// What was found (`a number`, `an array holding a boolean`, …).
        found: String,
    },
    /// A string holds a NUL byte.
    #[error("params: key {0:?}: the value contains a NUL byte, which no shell can hold")]
    Nul(String),
}

/// A parameter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamValue {
    /// `NAME='value'`.
    Scalar(String),
    /// `NAME=()` and `NAME[i]='value'`.
    Array(Vec<String>),
}

/// Parse a JSON parameter object and render it as a parameter file.
pub fn shell_assignments(json: &str) -> Result<Raw, ParamsError> {
    render(&parse(json)?)
}

/// Render checked parameters (names and values are validated again here, so
/// the function is safe to call with parameters built in Rust).
pub fn render(params: &[(String, ParamValue)]) -> Result<Raw, ParamsError> {
    let mut out = Raw::default();
    let mut seen = std::collections::HashSet::new();
    for (name, value) in params {
        let name_word = name_word(name)?;
        if !seen.insert(name.as_str()) {
            return Err(ParamsError::Duplicate(name.clone()));
        }
        let word = |s: &str| quote::quote_value(s).map_err(|_| ParamsError::Nul(name.clone()));
        match value {
            ParamValue::Scalar(s) => {
                out.push(&name_word)
                    .push_code("=")
                    .push_word(&word(s)?)
                    .push_code("\n");
            }
            ParamValue::Array(items) => {
                out.push(&name_word).push_code("=()\n");
                for (i, s) in items.iter().enumerate() {
                    let index = quote::quote(&i.to_string()).expect("digits quote");
                    out.push(&name_word)
                        .push_code("[")
                        .push_word(&index)
                        .push_code("]=")
                        .push_word(&word(s)?)
                        .push_code("\n");
                }
            }
        }
    }
    Ok(out)
}

/// A checked variable name is safe shell code as it stands.
fn name_word(name: &str) -> Result<Raw, ParamsError> {
    VarName::new(name).map_err(|_| ParamsError::BadName(name.to_owned()))?;
    // A valid name is made only of safe characters: quote() leaves it bare.
    Ok(quote::quote(name).expect("a valid name has no NUL").into())
}

/// Parse and check a JSON parameter object, keeping key order.
pub fn parse(json: &str) -> Result<Vec<(String, ParamValue)>, ParamsError> {
    let mut de = serde_json::Deserializer::from_str(json);
    let pairs = de
        .deserialize_map(PairsVisitor)
        .map_err(|e| ParamsError::Json(e.to_string()))?;
    de.end().map_err(|e| ParamsError::Json(e.to_string()))?;
    let mut out: Vec<(String, ParamValue)> = Vec::with_capacity(pairs.len());
    // A set, not a scan of `out`: a scan made 100,000 keys take 12 s.
    let mut seen = std::collections::HashSet::with_capacity(pairs.len());
    for (key, value) in pairs {
        if VarName::new(key.as_str()).is_err() {
            return Err(ParamsError::BadName(key));
        }
        if !seen.insert(key.clone()) {
            return Err(ParamsError::Duplicate(key));
        }
        let value = check_value(&key, value)?;
        out.push((key, value));
    }
    Ok(out)
}

/// Collects the object's entries in input order, duplicates included
/// (serde_json's own maps would keep only one of them).
struct PairsVisitor;

impl<'de> Visitor<'de> for PairsVisitor {
    type Value = Vec<(String, serde_json::Value)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object of strings and arrays of strings")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(entry) = map.next_entry()? {
            out.push(entry);
        }
        Ok(out)
    }
}

fn describe(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a nested array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn check_value(key: &str, value: serde_json::Value) -> Result<ParamValue, ParamsError> {
    let string = |v: serde_json::Value, in_array: bool| match v {
        serde_json::Value::String(s) if s.contains('\0') => Err(ParamsError::Nul(key.to_owned())),
        serde_json::Value::String(s) => Ok(s),
        other => Err(ParamsError::BadType {
            key: key.to_owned(),
            found: if in_array {
                format!("an array holding {}", describe(&other))
            } else {
                describe(&other).to_owned()
            },
        }),
    };
    match value {
        serde_json::Value::Array(items) => items
            .into_iter()
            .map(|v| string(v, true))
            .collect::<Result<_, _>>()
            .map(ParamValue::Array),
        other => string(other, false).map(ParamValue::Scalar),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_and_arrays_in_input_order() {
        let out = shell_assignments(r#"{"B":"x y","A":["a","it's"],"E":[]}"#).unwrap();
        assert_eq!(
            out.as_str(),
            "B='x y'\nA=()\nA[0]='a'\nA[1]=\"it's\"\nE=()\n"
        );
    }

    #[test]
    fn rejections_name_the_key() {
        let cases = [
            (r#"{"N":1}"#, "\"N\": a number"),
            (r#"{"T":true}"#, "\"T\": a boolean"),
            (r#"{"Z":null}"#, "\"Z\": null"),
            (r#"{"O":{}}"#, "\"O\": an object"),
            (r#"{"A":["a",2]}"#, "\"A\": an array holding a number"),
            (r#"{"A":[["a"]]}"#, "\"A\": an array holding a nested array"),
            (r#"{"S":"a\u0000b"}"#, "\"S\": the value contains a NUL"),
            (r#"{"S":["a\u0000b"]}"#, "\"S\": the value contains a NUL"),
            (r#"{"1A":"x"}"#, "\"1A\" is not a shell variable name"),
            (r#"{"A-B":"x"}"#, "\"A-B\" is not a shell variable name"),
            (r#"{"D":"x","D":"y"}"#, "\"D\" appears more than once"),
        ];
        for (json, want) in cases {
            let err = shell_assignments(json).unwrap_err().to_string();
            assert!(err.contains(want), "{json}: {err}");
        }
        for bad in ["[]", "\"x\"", "{", "{} x", ""] {
            assert!(matches!(parse(bad), Err(ParamsError::Json(_))), "{bad}");
        }
    }

    #[test]
    fn a_duplicate_among_many_keys_is_named() {
        let mut json = String::from("{");
        for i in 0..100_000 {
            json.push_str(&format!("\"K{i}\":\"v\","));
        }
        json.push_str("\"K99\":\"again\"}");
        assert_eq!(parse(&json), Err(ParamsError::Duplicate("K99".into())));
    }
}
