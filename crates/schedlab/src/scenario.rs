//! Seed reproductions (`schedlab reproduce`), defined as data in scenarios/*.toml.

/// Why reproduce failed.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Run(#[from] crate::RunError),
}

impl ScenarioError {
    pub fn code(&self) -> u8 {
        match self {
            ScenarioError::Input(_) => 2,
            ScenarioError::Run(crate::RunError::Invariant(_)) => 1,
            ScenarioError::Run(_) => 2,
        }
    }
}

/// `schedlab list scenarios`
pub fn list() -> String {
    "no built-in scenarios yet\n".to_string()
}

/// `schedlab reproduce`
pub fn cli_reproduce(
    _names: &[String],
    _runs: Option<u32>,
    _quick: bool,
    _json: bool,
    _progress: bool,
) -> Result<(), ScenarioError> {
    Err(ScenarioError::Input(
        "reproduce: no built-in scenarios yet".into(),
    ))
}
