//! The catalog: every script `shforge generate` writes.
//!
//! Each entry names its output path under `generated/`, the template it comes
//! from, its dialect and a one-line purpose, and knows how to render its body
//! (everything after the generated header).

use crate::dialect::Dialect;

/// Rendering a script body failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// askama failed (a value could not be written).
    #[error("rendering templates/{template}: {source}")]
    Template {
        /// The template being rendered.
        template: String,
        /// askama's error.
        source: askama::Error,
    },
    /// A value could not be quoted or a name was invalid.
    #[error("rendering templates/{template}: {source}")]
    Quote {
        /// The template being rendered.
        template: String,
        /// The quoting error.
        source: crate::quote::QuoteError,
    },
    /// Any other problem, explained.
    #[error("rendering templates/{template}: {message}")]
    Other {
        /// The template being rendered.
        template: String,
        /// What went wrong.
        message: String,
    },
}

/// A function that renders a script body.
pub type Render = Box<dyn Fn() -> Result<String, RenderError> + Send + Sync>;

/// One script of the catalog.
pub struct Entry {
    /// Output path relative to the output directory (`bootstrap.sh`,
    /// `installers/pi.sh`).
    pub path: String,
    /// The template it is rendered from, relative to `templates/`.
    pub template: String,
    /// The spec file that parameterizes the template, relative to the crate
    /// root (`installers/pi.toml`), when there is one.
    pub spec: Option<String>,
    /// The script's dialect.
    pub dialect: Dialect,
    /// One line saying what it is for.
    pub purpose: String,
    /// Renders the body.
    pub render: Render,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("path", &self.path)
            .field("template", &self.template)
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

/// Render an askama template, naming it in the error.
pub fn render_template<T: askama::Template>(template: &str, t: &T) -> Result<String, RenderError> {
    t.render().map_err(|source| RenderError::Template {
        template: template.to_owned(),
        source,
    })
}

/// Every script, in output-path order.
pub fn catalog() -> Vec<Entry> {
    let mut entries = crate::scripts::entries();
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    entries
}
