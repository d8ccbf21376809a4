//! The process's open-file limit: every connection is a file descriptor,
//! so a server that takes many connections raises its soft limit towards
//! the hard one before it starts.

/// Raises this process's soft open-file limit to at least `needed` (up to
/// the hard limit). Returns the soft limit before and after, or `None`
/// where the limit cannot be read (or on a platform without one).
///
/// # Examples
///
/// ```
/// if let Some((_, now)) = ringstream_cli::open_files::raise_to(64) {
///     assert!(now >= 64);
/// }
/// ```
// `rlim_t` is `u64` here but not on every Unix: the casts stay.
#[allow(clippy::unnecessary_cast)]
pub fn raise_to(needed: u64) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one rlimit into the struct it is given,
        // which lives on this stack frame for the call.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return None;
        }
        let soft = limit.rlim_cur as u64;
        if soft >= needed {
            return Some((soft, soft));
        }
        let raised = libc::rlimit {
            rlim_cur: needed.min(limit.rlim_max as u64) as libc::rlim_t,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads one rlimit from a struct on this stack
        // frame; raising the soft limit up to the hard one is allowed.
        let ok = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0;
        Some((soft, if ok { raised.rlim_cur as u64 } else { soft }))
    }
    #[cfg(not(unix))]
    {
        let _ = needed;
        None
    }
}
