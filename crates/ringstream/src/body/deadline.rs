//! [`BodyDeadlines`]: when a request body that waits for data fails, by
//! the three rules of [`Config`](crate::server::Config): each read within
//! `body_read_timeout`, the body as a whole no slower than
//! `body_min_rate`, and no longer than `body_timeout`.

use std::time::Duration;

use tokio::time::Instant;

use crate::error::Timeout;

/// The limits on a request body's pace.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyDeadlines {
    /// How long one read may wait.
    pub(crate) read: Duration,
    /// The slowest the body may come, in bytes per second (0: no
    /// minimum), after its first `read` window.
    pub(crate) min_rate: u64,
    /// The longest the whole body may take.
    pub(crate) total: Option<Duration>,
}

impl BodyDeadlines {
    /// Whether a deadline is measured from the body's first read (the rate
    /// or the total): its start must then be noted.
    pub(crate) fn measures_the_whole(&self) -> bool {
        self.min_rate > 0 || self.total.is_some()
    }

    /// Whether a body first read at `started` has run past its total
    /// deadline at `now`, however fast its bytes came.
    pub(crate) fn past_total(&self, now: Instant, started: Instant) -> bool {
        self.total
            .is_some_and(|total| now.saturating_duration_since(started) >= total)
    }

    /// The deadline of a read that starts waiting `now`, for a body first
    /// read at `started` that has delivered `received` bytes, and the
    /// timeout it ends in.
    pub(crate) fn next(&self, now: Instant, started: Instant, received: u64) -> (Instant, Timeout) {
        let mut deadline = now + self.read;
        let mut why = Timeout::RequestBodyRead;
        if self.min_rate > 0 {
            let earned = Duration::from_secs_f64(received as f64 / self.min_rate as f64);
            if let Some(allowed) = started.checked_add(self.read + earned) {
                if allowed < deadline {
                    deadline = allowed;
                    why = Timeout::RequestBodyRate;
                }
            }
        }
        if let Some(allowed) = self.total.and_then(|total| started.checked_add(total)) {
            if allowed < deadline {
                deadline = allowed;
                why = Timeout::RequestBodyTotal;
            }
        }
        (deadline, why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: BodyDeadlines = BodyDeadlines {
        read: Duration::from_secs(30),
        min_rate: 500,
        total: Some(Duration::from_secs(100)),
    };

    #[test]
    fn a_read_waits_its_timeout_while_the_body_keeps_its_pace() {
        let started = Instant::now();
        let now = started + Duration::from_secs(10);
        // 20 s earned by 10,000 bytes: 30 + 20 s from the start is later
        // than 30 s from now? No: 50 s vs 40 s, the read's comes first.
        let (deadline, why) = LIMITS.next(now, started, 10_000);
        assert_eq!(why, Timeout::RequestBodyRead);
        assert_eq!(deadline, now + Duration::from_secs(30));
    }

    #[test]
    fn a_slow_body_ends_at_its_rate_and_a_long_one_at_its_total() {
        let started = Instant::now();
        let now = started + Duration::from_secs(25);
        let (deadline, why) = LIMITS.next(now, started, 1_000);
        assert_eq!(why, Timeout::RequestBodyRate);
        assert_eq!(deadline, started + Duration::from_secs(32));

        let now = started + Duration::from_secs(90);
        let (deadline, why) = LIMITS.next(now, started, 1_000_000);
        assert_eq!(why, Timeout::RequestBodyTotal);
        assert_eq!(deadline, started + Duration::from_secs(100));
    }
}
