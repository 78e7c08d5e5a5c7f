//! The daemon's stop request, shared by the signal handler and the board threads.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// A stop request shared by the daemon and the board threads; sleeping on it ends at once when
/// it is raised, so shutdown does not wait for a retry pause.
#[derive(Clone, Default)]
pub struct StopSignal {
    inner: Arc<(Mutex<bool>, Condvar)>,
}

impl StopSignal {
    pub fn new() -> StopSignal {
        StopSignal::default()
    }

    pub fn stop(&self) {
        let (flag, wake) = &*self.inner;
        *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        *self.inner.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sleep for `duration` or until stopped; true when stopped.
    pub fn sleep(&self, duration: Duration) -> bool {
        let (flag, wake) = &*self.inner;
        let guard = flag.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = wake.wait_timeout_while(guard, duration, |stopped| !*stopped).unwrap_or_else(|e| e.into_inner());
        *guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_stop_ends_a_sleep_at_once() {
        let stop = StopSignal::new();
        let other = stop.clone();
        let started = Instant::now();
        let waiter = std::thread::spawn(move || other.sleep(Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(20));
        stop.stop();
        assert!(waiter.join().unwrap());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(stop.sleep(Duration::from_secs(30)), "already stopped: no wait");
    }

}
