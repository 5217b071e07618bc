//! Offline mode on the fixture in testdata/local: every command group of
//! `local`, each format, rejections and settings.

#[path = "../common/mod.rs"]
mod common;
mod fixture;
mod loading;
mod options;
mod parts;
mod reports;
mod stdout;
