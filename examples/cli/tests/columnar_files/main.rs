//! `local` on Parquet, plain CSV and JSONL files (and collections split
//! over several files): the fixture in testdata/local rewritten in each
//! format gives the same reports, to the cent, and the same rejections.

mod collections;
#[path = "../common/mod.rs"]
mod common;
mod fixture;
mod parquet;
mod places;
mod text;
