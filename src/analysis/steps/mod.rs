//! Training steps of one capture and what each step's time went to (docs/steps.md).
//!
//! [`find`] gives the step boundaries (Kineto `ProfilerStep#N`, XPlane `step_num` stats or the
//! `Steps` line, a user regex, else the whole capture as one step); [`breakdown`] splits every
//! step's wall time, per GPU device, into compute / exposed communication / memory / other busy
//! time and idle time (host wait / kernel wait / other), and measures the host's input wait.
//! [`comms`] reads the NCCL/RCCL collectives of a capture for the cross-rank analyses.

pub mod comms;
mod find;
mod parts;
pub mod serving;
mod types;

pub use find::find;
pub use parts::{DeviceParts, StepParts, breakdown, primary_device};
pub use types::{DEFAULT_INPUT_PATTERN, Step, StepOptions, StepSource, Steps};
