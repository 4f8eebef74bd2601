//! On-demand capture from running programs — the one part of tracetui that writes.
//!
//! - [`grpc`] (cargo feature `capture`): the client of the profiler server that JAX
//!   (`jax.profiler.start_server`) and TensorFlow (`tf.profiler.experimental.server.start`) run
//!   inside the training program; the capture lands as `<logdir>/plugins/profile/<session>/<host>.xplane.pb`.
//! - [`dynolog`]: PyTorch's on-demand path, a request to the `dynolog` daemon that makes Kineto in
//!   the job write its trace.
//! - [`logdir`]: where captures go and how they are written: only new files, only inside the log
//!   dir, through a temp file and a link so a live watcher never sees half a file.

pub mod dynolog;
#[cfg(feature = "capture")]
pub mod grpc;
pub mod logdir;
/// Prost types of the profiler service, generated from `proto/profiler_service.proto` and
/// `proto/profiler_options.proto` (checked by `tests/proto_codegen.rs`).
#[cfg(feature = "capture")]
pub mod proto {
    include!("generated.rs");

    /// The `tensorflow.profiler` package: the XSpace of `proto/xplane.proto`.
    pub mod profiler {
        pub use crate::formats::xplane::generated::XSpace;
    }
}
