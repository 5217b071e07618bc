//! Benchmark support: a deterministic synthetic data generator with realistic
//! subscription histories, writers for the file formats the CLI's offline mode
//! loads, and small timing and memory helpers for the scale harness.

pub mod generator;
pub mod http_client;
pub mod measure;
pub mod write;

/// Every harness allocates as the service does (see `submetrics_allocator`).
#[global_allocator]
static ALLOCATOR: submetrics_allocator::Mimalloc = submetrics_allocator::Mimalloc;
