//! The client's one error type: what went wrong, printed on stderr; every
//! error exits with status 1.

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The server answered with an error status.
    #[error("server answered {status}: {message}")]
    Server { status: u16, message: String },
    #[error("cannot reach {url}: {reason}")]
    Connection { url: String, reason: String },
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Core(#[from] submetrics::Error),
    #[error("{0}")]
    Stripe(#[from] submetrics_stripe_client::StripeError),
}

impl CliError {
    pub fn usage(text: impl Into<String>) -> CliError {
        CliError::Usage(text.into())
    }
}

pub type Result<T> = std::result::Result<T, CliError>;
