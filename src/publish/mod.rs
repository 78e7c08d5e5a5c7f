//! Publishing a game: the durable records (an append-only event log, a PDN file replaced
//! atomically) that nothing may lose, whatever kills the process.

pub mod atomic;
pub mod eventlog;

pub use atomic::write_atomically;
pub use eventlog::{EventLog, EventLogError};
