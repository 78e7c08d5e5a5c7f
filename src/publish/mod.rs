//! Publishing a game: the durable records (an append-only event log, PDN files replaced
//! atomically) that nothing may lose, whatever kills the process, kept by the [`Recorder`]
//! beside the tracker; and the live side's hub of events (served by the daemon's `api`).
//! Nothing here knows the daemon.

pub mod atomic;
pub mod eventlog;
pub mod hub;
pub mod recorder;
pub mod records;

pub use atomic::write_atomically;
pub use eventlog::{EventLog, EventLogError};
pub use recorder::Recorder;
