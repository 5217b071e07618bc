//! Benchmark support: a deterministic synthetic data generator with realistic
//! subscription histories, writers for the file formats the CLI's offline mode
//! loads, and small timing and memory helpers for the scale harness.

pub mod generator;
pub mod http_client;
pub mod measure;
pub mod write;

/// Every harness allocates through mimalloc, as the service does: with
/// glibc's allocator a bulk load spends more time in malloc than in the engine.
/// It is built without transparent huge pages (`no_thp`): on kernels that
/// grant them on request, every region mimalloc hands back and touches again
/// was a fresh 2 MiB page the kernel zeroed, which took most of a bulk load's
/// time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
