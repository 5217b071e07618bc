//! Placeholder until this crate is built out.
