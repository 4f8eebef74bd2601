//! File-name rules: which names are captures, and the host / worker / span they encode.

use crate::model::Format;

/// What a file name says about a file, before looking at its content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameKind {
    /// `<host>.xplane.pb` (`gz` = `.xplane.pb.gz`).
    XPlane {
        /// Host name.
        host: String,
        /// True for the gzipped variant.
        gz: bool,
    },
    /// `<host>.trace.json.gz`: XProf's trace-viewer export of an XPlane.
    XProfJson {
        /// Host name.
        host: String,
    },
    /// `perfetto_trace.json.gz`: the same export minus its metadata.
    Perfetto,
    /// `<worker>[.<span>].pt.trace.json[.gz]` (torch-tb-profiler's run regex).
    Kineto {
        /// Worker name (regex group 1).
        worker: String,
        /// Span timestamp (regex group 2), when present.
        span: Option<u64>,
    },
    /// `<host>.xplane.riegeli`: continuous-profiling chunks, not supported.
    Riegeli,
    /// Any other `*.json` / `*.json.gz`: a capture only if its content looks like a Chrome trace.
    MaybeJson {
        /// File name minus `.json[.gz]`.
        stem: String,
    },
    /// `*.folded` / `*.stacks.txt`: folded stacks, opened as a merged call tree.
    Folded {
        /// File name minus the suffix.
        stem: String,
    },
    /// Not a capture (`*.tmp`, hidden files, other extensions).
    Ignored,
}

impl NameKind {
    /// The format implied by the name alone (`None` for names that need sniffing or are ignored).
    pub fn format(&self) -> Option<Format> {
        match self {
            NameKind::XPlane { .. } => Some(Format::XPlane),
            NameKind::XProfJson { .. } | NameKind::Perfetto => Some(Format::XProfJson),
            NameKind::Kineto { .. } => Some(Format::Kineto),
            NameKind::Folded { .. } => Some(Format::Folded),
            _ => None,
        }
    }
}

/// Classifies a file name.
pub fn classify(name: &str) -> NameKind {
    if name.starts_with('.') || name.ends_with(".tmp") {
        return NameKind::Ignored;
    }
    if let Some(host) = name.strip_suffix(".xplane.pb") {
        return NameKind::XPlane {
            host: host.to_string(),
            gz: false,
        };
    }
    if let Some(host) = name.strip_suffix(".xplane.pb.gz") {
        return NameKind::XPlane {
            host: host.to_string(),
            gz: true,
        };
    }
    if let Some(stem) = name
        .strip_suffix(".folded")
        .or_else(|| name.strip_suffix(".stacks.txt"))
    {
        return NameKind::Folded {
            stem: stem.to_string(),
        };
    }
    if name.ends_with(".xplane.riegeli") {
        return NameKind::Riegeli;
    }
    if let Some((worker, span)) = kineto_name(name) {
        return NameKind::Kineto { worker, span };
    }
    if name == "perfetto_trace.json.gz" {
        return NameKind::Perfetto;
    }
    if let Some(host) = name.strip_suffix(".trace.json.gz") {
        return NameKind::XProfJson {
            host: host.to_string(),
        };
    }
    if let Some(stem) = name
        .strip_suffix(".json")
        .or_else(|| name.strip_suffix(".json.gz"))
    {
        return NameKind::MaybeJson {
            stem: stem.to_string(),
        };
    }
    NameKind::Ignored
}

/// Applies `^(.*?)(\.\d+)?\.pt\.trace\.json(\.gz)?$`: returns (worker, span).
pub fn kineto_name(name: &str) -> Option<(String, Option<u64>)> {
    let base = name
        .strip_suffix(".pt.trace.json")
        .or_else(|| name.strip_suffix(".pt.trace.json.gz"))?;
    // The lazy group 1 leaves the last `.<digits>` to group 2.
    if let Some(dot) = base.rfind('.') {
        let digits = &base[dot + 1..];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            // Spans longer than u64 keep their worker split but no number.
            return Some((base[..dot].to_string(), digits.parse().ok()));
        }
    }
    Some((base.to_string(), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_stack_names() {
        assert_eq!(
            classify("app.folded"),
            NameKind::Folded { stem: "app".into() }
        );
        assert_eq!(
            classify("worker0.123.stacks.txt").format(),
            Some(Format::Folded)
        );
        assert_eq!(classify("notes.txt"), NameKind::Ignored);
    }

    #[test]
    fn kineto_regex_groups() {
        assert_eq!(
            kineto_name("worker0.1795311589169457977.pt.trace.json"),
            Some(("worker0".into(), Some(1795311589169457977)))
        );
        assert_eq!(
            kineto_name("rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
            Some(("rank-0.Apr_03_18_51_38".into(), Some(1102)))
        );
        assert_eq!(kineto_name("w.pt.trace.json"), Some(("w".into(), None)));
        assert_eq!(kineto_name(".pt.trace.json"), Some(("".into(), None)));
        assert_eq!(kineto_name("w.12.pt.trace.json.tmp"), None);
        assert_eq!(kineto_name("x.trace.json"), None);
    }

    #[test]
    fn classifies_log_dir_files() {
        assert_eq!(
            classify("vm.xplane.pb"),
            NameKind::XPlane {
                host: "vm".into(),
                gz: false
            }
        );
        assert_eq!(
            classify("34.83.195.179_6003.xplane.pb.gz"),
            NameKind::XPlane {
                host: "34.83.195.179_6003".into(),
                gz: true
            }
        );
        assert_eq!(
            classify("vm.trace.json.gz"),
            NameKind::XProfJson { host: "vm".into() }
        );
        assert_eq!(classify("perfetto_trace.json.gz"), NameKind::Perfetto);
        assert_eq!(classify("vm.xplane.riegeli"), NameKind::Riegeli);
        assert_eq!(classify("a.pt.trace.json.tmp"), NameKind::Ignored);
        assert_eq!(classify(".cached_tools.json"), NameKind::Ignored);
        assert_eq!(classify("vm.overview_page.pb"), NameKind::Ignored);
        assert_eq!(
            classify("x.key_averages.json"),
            NameKind::MaybeJson {
                stem: "x.key_averages".into()
            }
        );
    }
}
