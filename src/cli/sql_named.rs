//! The named queries of `tracetui sql` (`assets/queries/*.sql`), built into the binary so that
//! `tracetui sql DIR top_kernels` works wherever tracetui is installed.

/// (name, SQL text) of every named query.
pub const NAMED: &[(&str, &str)] = &[
    (
        "collective_skew_per_step",
        include_str!("../../assets/queries/collective_skew_per_step.sql"),
    ),
    (
        "gpu_idle_per_rank",
        include_str!("../../assets/queries/gpu_idle_per_rank.sql"),
    ),
    (
        "step_time_per_rank",
        include_str!("../../assets/queries/step_time_per_rank.sql"),
    ),
    (
        "top_kernels",
        include_str!("../../assets/queries/top_kernels.sql"),
    ),
];

/// The SQL of the named query `name` (with or without `.sql`).
pub fn lookup(name: &str) -> Option<&'static str> {
    let n = name.strip_suffix(".sql").unwrap_or(name);
    NAMED.iter().find(|(k, _)| *k == n).map(|(_, q)| *q)
}

/// The one-line description of a query: its first comment line up to the first colon.
pub fn description(sql: &str) -> &str {
    let first = sql
        .lines()
        .find_map(|l| l.trim().strip_prefix("--"))
        .unwrap_or("")
        .trim();
    first.split_once(':').map_or(first, |(d, _)| d.trim())
}

/// `tracetui sql --list`: one line per named query.
pub fn list_text() -> String {
    let w = NAMED.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut s = String::new();
    for (n, q) in NAMED {
        s.push_str(&format!("{n:<w$}  {}\n", description(q)));
    }
    s.push_str("\nRun one by name: tracetui sql DATASET_OR_LOGDIR NAME (the SQL: assets/queries/NAME.sql)\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_is_named_and_described() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/queries");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .expect("assets/queries")
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".sql")
                    .map(String::from)
            })
            .collect();
        files.sort();
        let names: Vec<&str> = NAMED.iter().map(|(n, _)| *n).collect();
        assert_eq!(files, names, "a query file is missing from NAMED");
        assert_eq!(description(NAMED[3].1), "Top GPU kernels across ranks");
        assert!(lookup("top_kernels").is_some() && lookup("top_kernels.sql").is_some());
        assert!(lookup("nope").is_none());
        for (_, q) in NAMED {
            assert!(!description(q).is_empty());
        }
        let list = list_text();
        let line = list
            .lines()
            .find(|l| l.starts_with("gpu_idle_per_rank "))
            .expect("listed");
        assert!(line.ends_with("  GPU idle per rank and device"), "{line}");
    }
}
