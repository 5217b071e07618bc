//! Benchmark support: a deterministic synthetic data generator with realistic
//! subscription histories, writers for the file formats the CLI's offline mode
//! loads, and small timing and memory helpers for the scale harness.

pub mod generator;
pub mod measure;
pub mod write;

/// Every harness allocates through mimalloc, as the service does: with
/// glibc's allocator a bulk load spends more time in malloc than in the engine.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
