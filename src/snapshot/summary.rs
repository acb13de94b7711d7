//! The one place a [`Summary`] is built, from the normalized parts.

use super::{Kind, PartKind, SessionRecord, Snapshot, Summary, Tokens, ToolCallSummary};

/// Wrap the sessions a reader found into a [`Snapshot`] with its summary.
pub(super) fn snapshot(kind: Kind, sessions: Vec<SessionRecord>) -> Snapshot {
    let summary = summarize(&sessions);
    Snapshot {
        harness: kind.name().to_owned(),
        sessions,
        summary,
    }
}

fn summarize(sessions: &[SessionRecord]) -> Summary {
    let mut tokens = Tokens::default();
    let mut tool_calls = Vec::new();
    let mut messages = 0;
    for session in sessions {
        tokens += session.tokens;
        messages += session.messages.len();
        for message in &session.messages {
            for part in &message.parts {
                if let PartKind::ToolCall { tool, status, .. } = &part.kind {
                    tool_calls.push(ToolCallSummary {
                        tool: tool.clone(),
                        status: *status,
                        unfinished: status.is_unfinished(),
                    });
                }
            }
        }
    }
    Summary {
        sessions: sessions.len(),
        messages,
        tool_calls,
        final_text: final_text(sessions),
        tokens,
    }
}

/// The last assistant message of the last top-level session, when it has
/// text: a run that ended in a tool call (cut off mid-tool) has none.
fn final_text(sessions: &[SessionRecord]) -> Option<String> {
    let session = sessions
        .iter()
        .rev()
        .find(|s| s.parent_id.is_none())
        .or(sessions.last())?;
    let last = session
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "assistant")?;
    let texts: Vec<&str> = last
        .parts
        .iter()
        .filter_map(|p| match &p.kind {
            PartKind::Text { text } if !text.is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}
