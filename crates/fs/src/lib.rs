//! # spinstack-fs: the file-system layer, as a model
//! (placeholder; the full doc comes with the modules)

pub mod allocator;
pub mod block;
pub mod cache;
pub mod config;
pub mod space;
pub mod traxtent;
pub mod writeback;

pub use allocator::{AllocError, Allocator, FileId};
pub use block::{BlockNumber, BlockRun, BlockSize};
pub use config::{AllocatorConfig, Placement, Preallocation};
pub use space::BlockState;
pub use traxtent::Traxtents;
