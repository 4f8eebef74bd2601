//! Collective instances across ranks: matching, clock alignment and per-instance figures.
//!
//! Matching key per rank (docs/steps.md): `(process group, Seq)` when the kernel (or its
//! `record_param_comms`) carries `Seq`; else `(process group, k)` for the k-th collective of that
//! group on the rank; else `(stream ordinal, kernel name, k)` for the k-th kernel of that name on
//! the rank's i-th communication stream. A key repeated on one rank (coalesced kernels) is told
//! apart by its occurrence.
//!
//! Clock alignment: the same instance ends within microseconds on every rank, so each clock host
//! gets the median of (end on that host − end on the reference host, the host of the lowest rank)
//! over the instances both took part in; times are shifted by it before skews are measured.

use super::summary::RankSummary;
use crate::analysis::steps::comms::CollKind;
use std::collections::BTreeMap;

/// Offset of one clock host from the reference host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockOffset {
    /// Clock host.
    pub host: String,
    /// Its clock minus the reference clock, ns (subtract it to align).
    pub offset_ns: i64,
    /// Matched instances the estimate rests on (0: not estimated, offset 0).
    pub samples: usize,
}

/// One collective instance across the ranks that took part.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// Collective kind (`all_reduce`, …), else the kernel name.
    pub name: String,
    /// Kernel name (of the lowest rank).
    pub kernel: String,
    /// Process group name, if known.
    pub group: Option<String>,
    /// `Seq` when known, else the occurrence index in its group / stream.
    pub index: i64,
    /// Members: (index into the run's ranks, index into that rank's `colls`).
    pub members: Vec<(usize, usize)>,
    /// Latest minus earliest aligned start, ns.
    pub skew_start_ns: i64,
    /// Latest minus earliest aligned end, ns.
    pub skew_end_ns: i64,
    /// Shortest duration (the last arrival's: no waiting), ns.
    pub dur_min_ns: i64,
    /// Longest duration, ns.
    pub dur_max_ns: i64,
    /// nccl-tests' S, bytes.
    pub bytes: Option<u64>,
    /// S / t with t = `dur_min_ns`, 10⁹ B/s.
    pub algbw_gbps: Option<f64>,
    /// algbw × nccl-tests' bus factor.
    pub busbw_gbps: Option<f64>,
    /// Index (into the run's ranks) of the member that started last (aligned).
    pub last: usize,
    /// Every member was recording before the first member arrived, and the instance has as
    /// many members as the largest instance of its group: usable for arrival statistics.
    pub complete: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Seq(String, i64),
    Group(String, usize),
    Stream(usize, String, usize),
}

fn keys_of(r: &RankSummary) -> Vec<(Key, usize)> {
    let mut order: Vec<usize> = (0..r.colls.len()).collect();
    order.sort_by_key(|&i| (r.colls[i].start_ns, i));
    let mut streams: Vec<i64> = r.colls.iter().map(|c| c.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    let name = |i: Option<u32>| {
        i.and_then(|i| r.names.get(i as usize))
            .cloned()
            .unwrap_or_default()
    };
    let mut per_group: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_stream: BTreeMap<(usize, u32), usize> = BTreeMap::new();
    let mut seen: BTreeMap<Key, usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(order.len());
    for i in order {
        let c = &r.colls[i];
        let key = match (c.group, c.seq) {
            (g, Some(seq)) => Key::Seq(name(g), seq),
            (Some(g), None) => {
                let k = per_group.entry(name(Some(g))).or_default();
                *k += 1;
                Key::Group(name(Some(g)), *k - 1)
            }
            (None, None) => {
                let ord = streams.partition_point(|&s| s < c.stream);
                let k = per_stream.entry((ord, c.kernel)).or_default();
                *k += 1;
                Key::Stream(ord, name(Some(c.kernel)), *k - 1)
            }
        };
        let dup = seen.entry(key.clone()).or_default();
        *dup += 1;
        // A repeated key on one rank: keep occurrences apart.
        let key = match (key, *dup - 1) {
            (k, 0) => k,
            (Key::Seq(g, s), d) => Key::Group(format!("{g}#seq{s}"), d),
            (Key::Group(g, k), d) => Key::Group(format!("{g}#{k}"), d),
            (Key::Stream(o, n, k), d) => Key::Stream(o, format!("{n}#{k}"), d),
        };
        out.push((key, i));
    }
    out
}

fn median(v: &mut [i64]) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(v[v.len() / 2])
}

/// Matches the collectives of `ranks` (sorted by rank), estimates clock offsets and computes
/// every instance's figures. Returns the instances (in key order) and one offset per rank.
pub fn match_instances(ranks: &[&RankSummary]) -> (Vec<Instance>, Vec<ClockOffset>) {
    let mut table: BTreeMap<Key, Vec<(usize, usize)>> = BTreeMap::new();
    for (ri, r) in ranks.iter().enumerate() {
        for (k, i) in keys_of(r) {
            table.entry(k).or_default().push((ri, i));
        }
    }
    // Clock offsets per host, from instances with at least two members.
    let reference = ranks
        .first()
        .map(|r| r.clock_host.clone())
        .unwrap_or_default();
    let mut samples: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for members in table.values() {
        let Some(&(rr, ri)) = members
            .iter()
            .find(|(r, _)| ranks[*r].clock_host == reference)
        else {
            continue;
        };
        let e_ref = ranks[rr].colls[ri].end_ns;
        for &(r, i) in members {
            let h = ranks[r].clock_host.as_str();
            if h != reference {
                samples
                    .entry(h)
                    .or_default()
                    .push(ranks[r].colls[i].end_ns - e_ref);
            }
        }
    }
    let mut host_offset: BTreeMap<String, (i64, usize)> = BTreeMap::new();
    for (h, mut v) in samples {
        let n = v.len();
        host_offset.insert(h.to_string(), (median(&mut v).unwrap_or(0), n));
    }
    let offsets: Vec<ClockOffset> = ranks
        .iter()
        .map(|r| {
            let (o, n) = host_offset.get(&r.clock_host).copied().unwrap_or((0, 0));
            ClockOffset {
                host: r.clock_host.clone(),
                offset_ns: o,
                samples: n,
            }
        })
        .collect();
    // Largest membership per group (or stream ordinal) for the completeness test.
    let group_of = |k: &Key| match k {
        Key::Seq(g, _) | Key::Group(g, _) => g.split('#').next().unwrap_or("").to_string(),
        Key::Stream(o, _, _) => format!("stream#{o}"),
    };
    let mut widest: BTreeMap<String, usize> = BTreeMap::new();
    for (k, m) in &table {
        let w = widest.entry(group_of(k)).or_default();
        *w = (*w).max(m.len());
    }
    let mut out = Vec::with_capacity(table.len());
    for (k, members) in table {
        let al = |r: usize, t: i64| t - offsets[r].offset_ns;
        let starts: Vec<i64> = members
            .iter()
            .map(|&(r, i)| al(r, ranks[r].colls[i].start_ns))
            .collect();
        let ends: Vec<i64> = members
            .iter()
            .map(|&(r, i)| al(r, ranks[r].colls[i].end_ns))
            .collect();
        let durs: Vec<i64> = members
            .iter()
            .map(|&(r, i)| ranks[r].colls[i].end_ns - ranks[r].colls[i].start_ns)
            .collect();
        let (Some(&s0), Some(&s1)) = (starts.iter().min(), starts.iter().max()) else {
            continue;
        };
        let (e0, e1) = (
            ends.iter().min().copied().unwrap_or(0),
            ends.iter().max().copied().unwrap_or(0),
        );
        let last_pos = starts
            .iter()
            .enumerate()
            .max_by_key(|(p, s)| (**s, std::cmp::Reverse(*p)))
            .map_or(0, |(p, _)| p);
        let (lr, li) = members[0];
        let first = &ranks[lr].colls[li];
        let kernel = ranks[lr]
            .names
            .get(first.kernel as usize)
            .cloned()
            .unwrap_or_default();
        let kind = first.kind;
        let n = first.size.group_size.unwrap_or(members.len() as u64).max(1);
        let bytes = members
            .iter()
            .find_map(|&(r, i)| ranks[r].colls[i].size.bytes(kind));
        let dmin = durs.iter().min().copied().unwrap_or(0);
        let algbw = bytes.filter(|_| dmin > 0).map(|b| b as f64 / dmin as f64);
        let recording = members
            .iter()
            .all(|&(r, _)| al(r, ranks[r].span_ns.0) <= s0);
        let index = match &k {
            Key::Seq(_, s) => *s,
            Key::Group(_, i) | Key::Stream(_, _, i) => *i as i64,
        };
        out.push(Instance {
            name: if kind == CollKind::Unknown {
                kernel.clone()
            } else {
                kind.name().to_string()
            },
            kernel,
            group: first
                .group
                .and_then(|g| ranks[lr].names.get(g as usize).cloned()),
            index,
            skew_start_ns: s1 - s0,
            skew_end_ns: e1 - e0,
            dur_min_ns: dmin,
            dur_max_ns: durs.iter().max().copied().unwrap_or(0),
            bytes,
            algbw_gbps: algbw,
            busbw_gbps: algbw.map(|a| a * kind.bus_factor(n)),
            last: members[last_pos].0,
            complete: recording
                && members.len() >= 2
                && widest
                    .get(&group_of(&k))
                    .is_some_and(|&w| members.len() == w),
            members,
        });
    }
    out.sort_by_key(|i| {
        i.members.first().map_or(i64::MAX, |&(r, c)| {
            ranks[r].colls[c].start_ns - offsets[r].offset_ns
        })
    });
    (out, offsets)
}
