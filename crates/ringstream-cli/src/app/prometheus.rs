//! The demo's own counters in Prometheus text, written into `/metrics`
//! after the server's: the broadcasters' (`/events`, `/ws/broadcast`) and
//! the WebSocket connections open on each route.

use std::fmt;

use ringstream::{sse, ws};

/// What a broadcaster has counted, at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct BroadcastCounters {
    /// Clients subscribed now.
    pub(super) subscribers: u64,
    /// Messages sent to the broadcaster.
    pub(super) sent: u64,
    /// Messages clients skipped because they fell behind, summed over
    /// clients (drop-oldest).
    pub(super) dropped: u64,
    /// Clients closed because they fell behind (close policy).
    pub(super) lag_closed: u64,
}

impl BroadcastCounters {
    /// The counters of a WebSocket broadcaster.
    pub(super) fn of_ws(broadcaster: &ws::Broadcaster) -> BroadcastCounters {
        BroadcastCounters {
            subscribers: broadcaster.subscriber_count() as u64,
            sent: broadcaster.sent(),
            dropped: broadcaster.dropped_total(),
            lag_closed: broadcaster.closed_for_lag(),
        }
    }

    /// The counters of a server-sent events broadcaster.
    pub(super) fn of_sse(broadcaster: &sse::Broadcaster) -> BroadcastCounters {
        BroadcastCounters {
            subscribers: broadcaster.subscriber_count() as u64,
            sent: broadcaster.sent(),
            dropped: broadcaster.dropped_total(),
            lag_closed: broadcaster.closed_for_lag(),
        }
    }
}

/// Writes the four families `{prefix}_subscribers`, `{prefix}_sent_total`,
/// `{prefix}_dropped_total` and `{prefix}_lag_closed_total`, one sample
/// per route; `kind` names the broadcasters in the help text.
pub(super) fn write_broadcasters<W: fmt::Write>(
    out: &mut W,
    prefix: &str,
    kind: &str,
    routes: &[(&str, BroadcastCounters)],
) -> fmt::Result {
    type Read = fn(&BroadcastCounters) -> u64;
    let families: [(&str, String, &str, Read); 4] = [
        (
            "subscribers",
            format!("Clients subscribed to a {kind} broadcaster now, by route."),
            "gauge",
            |c| c.subscribers,
        ),
        (
            "sent_total",
            format!("Messages sent to a {kind} broadcaster (each encoded once for every client), by route."),
            "counter",
            |c| c.sent,
        ),
        (
            "dropped_total",
            format!("Messages clients of a {kind} broadcaster skipped because they fell behind its history (drop-oldest), summed over clients, by route."),
            "counter",
            |c| c.dropped,
        ),
        (
            "lag_closed_total",
            format!("Clients of a {kind} broadcaster closed because they fell behind its history (close policy), by route."),
            "counter",
            |c| c.lag_closed,
        ),
    ];
    for (suffix, help, kind, value) in families {
        write_family(
            out,
            &format!("{prefix}_{suffix}"),
            &help,
            kind,
            routes
                .iter()
                .map(|(route, counters)| (*route, value(counters))),
        )?;
    }
    Ok(())
}

/// Writes one family: its help and type, then a sample per route.
pub(super) fn write_family<'a, W: fmt::Write>(
    out: &mut W,
    name: &str,
    help: &str,
    kind: &str,
    samples: impl IntoIterator<Item = (&'a str, u64)>,
) -> fmt::Result {
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} {kind}")?;
    for (route, value) in samples {
        writeln!(out, "{name}{{route=\"{route}\"}} {value}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_have_help_type_and_one_sample_per_route() {
        let mut out = String::new();
        let counters = BroadcastCounters {
            subscribers: 3,
            sent: 10,
            dropped: 7,
            lag_closed: 1,
        };
        write_broadcasters(
            &mut out,
            "demo_broadcast",
            "test",
            &[("/a", counters), ("/b", BroadcastCounters::default())],
        )
        .unwrap();
        for (name, kind, a) in [
            ("demo_broadcast_subscribers", "gauge", 3),
            ("demo_broadcast_sent_total", "counter", 10),
            ("demo_broadcast_dropped_total", "counter", 7),
            ("demo_broadcast_lag_closed_total", "counter", 1),
        ] {
            assert!(out.contains(&format!("# TYPE {name} {kind}\n")), "{out}");
            assert!(
                out.contains(&format!("{name}{{route=\"/a\"}} {a}\n")),
                "{out}"
            );
            assert!(
                out.contains(&format!("{name}{{route=\"/b\"}} 0\n")),
                "{out}"
            );
        }
        assert_eq!(out.matches("# HELP ").count(), 4);
    }

    #[test]
    fn a_broadcaster_that_fell_behind_counts_its_drops() {
        let broadcaster = ws::Broadcaster::new(2, sse::OverflowPolicy::DropOldest);
        let _slow = broadcaster.subscribe();
        for _ in 0..5 {
            broadcaster.send(&ws::Message::text("x"));
        }
        assert_eq!(
            BroadcastCounters::of_ws(&broadcaster),
            BroadcastCounters {
                subscribers: 1,
                sent: 5,
                dropped: 3,
                lag_closed: 0,
            }
        );
    }
}
