//! Alternating rounds: the order in which the servers run round by round,
//! and the medians, per-round ratios and quartiles of what they measured.

/// `items` in their order on even rounds and reversed on odd ones, so that
/// no server always runs first (A B, then B A).
pub fn alternated<T: Clone>(round: usize, items: &[T]) -> Vec<T> {
    let mut order = items.to_vec();
    if round % 2 == 1 {
        order.reverse();
    }
    order
}

/// The indices `0..n` in the order of round `round`, as [`alternated`].
pub fn indices(round: usize, n: usize) -> Vec<usize> {
    alternated(round, &(0..n).collect::<Vec<_>>())
}

/// The median of `f` over `samples` (0 if there are none).
pub fn median_by<T>(samples: &[T], f: impl Fn(&T) -> f64) -> f64 {
    super::median(&samples.iter().map(f).collect::<Vec<_>>())
}

/// Per-round ratios `a[r] / b[r]`.
pub fn ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(a, b)| a / b).collect()
}

/// The first and third quartiles of `v` (the medians of its lower and
/// upper halves).
pub fn quartiles(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let half = s.len() / 2;
    let upper = s.len() - half;
    (
        super::median(s.get(..half).unwrap_or_default()),
        super::median(s.get(upper..).unwrap_or_default()),
    )
}

/// `median` to two decimals, followed by the quartiles of `ratios` when
/// there are at least two: `1.23 (1.10–1.31)`.
pub fn with_quartiles(median: f64, ratios: &[f64]) -> String {
    if ratios.len() >= 2 {
        let (q1, q3) = quartiles(ratios);
        format!("{median:.2} ({q1:.2}–{q3:.2})")
    } else {
        format!("{median:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_the_order() {
        assert_eq!(indices(0, 3), [0, 1, 2]);
        assert_eq!(indices(1, 3), [2, 1, 0]);
        assert_eq!(alternated(2, &["a", "b"]), ["a", "b"]);
        assert_eq!(alternated(3, &["a", "b"]), ["b", "a"]);
    }

    #[test]
    fn ratios_and_quartiles() {
        assert_eq!(ratios(&[2.0, 9.0], &[1.0, 3.0]), [2.0, 3.0]);
        assert_eq!(quartiles(&[4.0, 1.0, 3.0, 2.0]), (1.5, 3.5));
        assert_eq!(
            with_quartiles(2.5, &[1.0, 2.0, 3.0, 4.0]),
            "2.50 (1.50–3.50)"
        );
        assert_eq!(with_quartiles(2.0, &[2.0]), "2.00");
    }
}
