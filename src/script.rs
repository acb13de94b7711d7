//! What every generated script is: the [`Script`] trait.
//!
//! A leaf module: it knows dialects, quoting errors and askama, and nothing
//! of the catalog, of `generate` or of any one script. The scripts in
//! [`crate::scripts`] implement it, [`crate::catalog`] lists them and
//! [`crate::generate`] turns any `&dyn Script` into a file.

use std::borrow::Cow;

use crate::dialect::Dialect;

/// One generated script: where it goes, what it is made from, and its body.
pub trait Script {
    /// Output path relative to the output directory (`bootstrap.sh`,
    /// `installers/pi.sh`).
    fn path(&self) -> Cow<'_, str>;

    /// The template it is rendered from, relative to `templates/`.
    fn template(&self) -> &str;

    /// The spec that parameterizes the template, when there is one: a path
    /// relative to the crate root (`installers/pi.toml`) or a file name,
    /// never an absolute path. It is named in the generated header.
    fn spec(&self) -> Option<&str> {
        None
    }

    /// The script's dialect.
    fn dialect(&self) -> Dialect;

    /// One line saying what it is for (`shforge list`).
    fn purpose(&self) -> Cow<'_, str>;

    /// The rendered body: everything after the generated header.
    fn body(&self) -> Result<String, RenderError>;
}

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

/// Render an askama template, naming it in the error.
pub fn render_template<T: askama::Template>(template: &str, t: &T) -> Result<String, RenderError> {
    t.render().map_err(|source| RenderError::Template {
        template: template.to_owned(),
        source,
    })
}
