//! What each command does: `online` talks to the service (`import` sends
//! it files of records), `local` runs the engine on files.

pub mod csv_text;
pub mod files;
pub mod import;
pub mod jsonl;
pub mod library_panics;
pub mod local;
pub mod online;
pub mod places;
pub mod record_files;
pub mod stripe_export;
pub mod stripe_files;
pub mod text_source;
