//! The wire APIs a harness speaks to the model server (a spec's `apis`).

use std::fmt;
use std::str::FromStr;

use super::HarnessError;

/// The wire API between the harness and the model server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    Chat,
    /// OpenAI Responses (`POST /v1/responses`).
    Responses,
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// Google Gemini (`POST /v1beta/models/M:streamGenerateContent`; the
    /// client adds `/v1beta` to the root itself).
    Gemini,
}

impl Api {
    /// Every API, in a fixed order (the first is the default of a harness
    /// that speaks them all).
    pub const ALL: [Api; 4] = [Api::Chat, Api::Responses, Api::Anthropic, Api::Gemini];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Responses => "responses",
            Api::Anthropic => "anthropic",
            Api::Gemini => "gemini",
        }
    }

    /// The key variable used when none is named.
    pub fn default_key_env(self) -> &'static str {
        match self {
            Api::Anthropic => "ANTHROPIC_API_KEY",
            Api::Gemini => "GEMINI_API_KEY",
            Api::Chat | Api::Responses => "OPENAI_API_KEY",
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Api {
    type Err = HarnessError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Api::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| HarnessError::UnknownApi(s.to_owned()))
    }
}
