//! The client against a real server started here: every command group, each
//! format, terminal detection, key precedence, bodies, exit codes.

mod answers;
mod configuration;
mod imports;
mod records;
mod reports;
mod server;
mod terminal;
