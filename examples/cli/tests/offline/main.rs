//! Offline mode on the fixture in testdata/local: every command group of
//! `local`, each format, rejections and settings.

mod fixture;
mod loading;
mod options;
mod reports;
