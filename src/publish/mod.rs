//! Publishing a game: the durable records (an append-only event log, PDN files replaced
//! atomically) that nothing may lose, whatever kills the process; and the live side (a hub of
//! events, the HTTP API with SSE and WebSocket streams).

pub mod atomic;
pub mod eventlog;
pub mod http;
pub mod hub;
pub mod records;

pub use atomic::write_atomically;
pub use eventlog::{EventLog, EventLogError};
