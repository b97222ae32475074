//! The flow-control schemes from outside the core that this extension includes, each behind a
//! cargo feature: a plugin crate depends on `hopsim-core`, and its `register` runs here when the
//! module loads, before any scenario is read (`hopsim_core::fc::plugin`). To add one: an optional
//! dependency and a feature in `Cargo.toml`, a line below, and the feature in pyproject.toml's
//! `[tool.maturin] features` (docs/writing-a-scheme.md, "Outside the core").

/// Registers every plugin scheme built in; an error names the scheme.
pub fn register() -> Result<(), String> {
    #[cfg(feature = "example-plugin")]
    buffer_pause_plugin::register()?;
    Ok(())
}
