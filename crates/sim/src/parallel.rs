//! Independent simulation runs on all cores: a parameter grid's points, each a
//! deterministic function of its input, mapped by a pool of scoped threads that
//! take the next unclaimed item. Results come back in the order of the items, so a
//! run's output never depends on thread timing. No global state: the library calls
//! that sweep grids (the lab's experiments, the replication study) all use this.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` over `items` on every available core, results in the order of `items`;
/// `done` is called once per finished item (for progress bars).
pub fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
    done: impl Fn() + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(index) else {
                    break;
                };
                let result = f(item);
                results.lock().expect("no worker panicked")[index] = Some(result);
                done();
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every item was mapped"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves results keep the items' order and `done` runs once per item, however
    // the threads interleave (items of uneven cost).
    #[test]
    fn keeps_order_and_counts_done() {
        let items: Vec<u64> = (0..200).collect();
        let finished = AtomicUsize::new(0);
        let squares = map_in_order(
            &items,
            |&x| {
                if x % 7 == 0 {
                    std::thread::yield_now();
                }
                x * x
            },
            || {
                finished.fetch_add(1, Ordering::Relaxed);
            },
        );
        assert_eq!(squares, items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert_eq!(finished.load(Ordering::Relaxed), items.len());
        assert!(map_in_order(&[] as &[u64], |&x| x, || {}).is_empty());
    }
}
