//! Row order: kinds apart (in [`EventKind`] order), then the chosen column, then the name.

use super::StatRow;

/// Row order within a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Self time, largest first.
    #[default]
    SelfTime,
    /// Total time, largest first.
    Total,
    /// Count, largest first.
    Count,
    /// Average duration, largest first.
    Avg,
    /// Name, ascending.
    Name,
    /// Device time launched by the row's events themselves, largest first.
    SelfDevice,
    /// Device time launched by them or below them, largest first.
    DeviceTotal,
}

/// Sorts rows by kind, then by `key`; ties by name.
pub fn sort_rows(rows: &mut [StatRow], key: SortKey) {
    rows.sort_by(|a, b| {
        let o = match key {
            SortKey::SelfTime => b.self_ps.cmp(&a.self_ps),
            SortKey::Total => b.total_ps.cmp(&a.total_ps),
            SortKey::Count => b.count.cmp(&a.count),
            SortKey::Avg => b.avg_ps().total_cmp(&a.avg_ps()),
            SortKey::Name => std::cmp::Ordering::Equal,
            SortKey::SelfDevice => b.self_dev_ps.cmp(&a.self_dev_ps),
            SortKey::DeviceTotal => b.dev_total_ps.cmp(&a.dev_total_ps),
        };
        a.kind
            .cmp(&b.kind)
            .then(o)
            .then_with(|| a.name.cmp(&b.name))
    });
}
