//! Work over many customers on every core with the outcome of a walk one
//! by one: the items are taken in runs, each run folded on some core, and
//! the runs' results kept in order.

use crate::error::Result;
use rayon::prelude::*;

/// How many items one task of [`fold_runs`] takes: enough to outweigh
/// handing out a task, few enough that both cores stay busy to the end.
pub(crate) const ITEMS_PER_RUN: usize = 2048;

/// Folds `items` into one `A` per run of [`ITEMS_PER_RUN`], in order,
/// runs on every core; `visit` sees a run's items in order. The error
/// answered is the first item's in order, as a walk one by one would meet
/// it (a parallel collect into a `Result` answers any of them).
pub(crate) fn fold_runs<'i, I: Sync, A: Send>(
    items: &'i [I],
    start: impl Fn() -> A + Sync,
    visit: impl Fn(&mut A, &'i I) -> Result<()> + Sync,
) -> Result<Vec<A>> {
    let runs: Vec<Result<A>> = items
        .par_chunks(ITEMS_PER_RUN)
        .map(|run| {
            let mut folded = start();
            for item in run {
                visit(&mut folded, item)?;
            }
            Ok(folded)
        })
        .collect();
    runs.into_iter().collect()
}

/// The runs' lists as one, in order.
pub(crate) fn joined<T>(runs: Vec<Vec<T>>) -> Vec<T> {
    let mut all = Vec::with_capacity(runs.iter().map(Vec::len).sum());
    for mut run in runs {
        all.append(&mut run);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn runs_keep_the_order_and_the_first_error_in_it() {
        let items: Vec<usize> = (0..3 * ITEMS_PER_RUN + 5).collect();
        let doubled = fold_runs(&items, Vec::new, |out, &n| {
            out.extend([2 * n, 2 * n + 1]);
            Ok(())
        })
        .map(joined)
        .unwrap();
        assert_eq!(doubled, (0..2 * items.len()).collect::<Vec<_>>());
        let sums = fold_runs(
            &items,
            || 0,
            |sum, &n| {
                *sum += n;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(sums.len(), 4);
        assert_eq!(sums.iter().sum::<usize>(), items.iter().sum::<usize>());
        // Items 10 and 5000 fail, in different runs: 10's error is answered.
        for _ in 0..20 {
            let failed = fold_runs(
                &items,
                || (),
                |_, &n| match n {
                    10 | 5000 => Err(Error::query("item", n.to_string())),
                    _ => Ok(()),
                },
            );
            assert_eq!(
                failed.unwrap_err().to_string(),
                Error::query("item", "10").to_string()
            );
        }
    }
}
