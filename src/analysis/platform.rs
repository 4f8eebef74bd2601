//! Which plane a per-device analysis reads, as ejkernel picks it (analysis.md §c.1): the first
//! plane (file order) whose name contains the platform string, case-insensitively — `gpu` →
//! `/device:GPU:0`, `tpu` → `/device:TPU:0`, `cpu` → `/host:CPU`.

use crate::model::Capture;

/// The platform ejkernel's callers pass for a capture: the device kind of its first device plane
/// (`/device:GPU:0` → `gpu`, `/device:TPU:0` → `tpu`), else `cpu` (a CPU-only capture).
pub fn default_platform(c: &Capture) -> String {
    planes_in_order(c)
        .into_iter()
        .find_map(|p| {
            let name = c.strings.get(c.processes[p as usize].name);
            let kind = name.strip_prefix("/device:")?.split(':').next()?;
            (!kind.is_empty()).then(|| kind.to_ascii_lowercase())
        })
        .unwrap_or_else(|| "cpu".into())
}

/// The first process, in plane order, whose name contains `platform` (case-insensitively).
pub fn plane_for(c: &Capture, platform: &str) -> Option<u32> {
    let want = platform.to_lowercase();
    planes_in_order(c).into_iter().find(|&p| {
        c.strings
            .get(c.processes[p as usize].name)
            .to_lowercase()
            .contains(&want)
    })
}

/// Process ids in file order (the loaders' `sort_index`, then creation order).
pub fn planes_in_order(c: &Capture) -> Vec<u32> {
    let mut v: Vec<u32> = (0..c.processes.len() as u32).collect();
    v.sort_by_key(|&p| (c.processes[p as usize].sort_index, p));
    v
}

/// The names of the planes, in file order (for "no plane matches" messages).
pub fn plane_names(c: &Capture) -> Vec<String> {
    planes_in_order(c)
        .into_iter()
        .map(|p| c.strings.get(c.processes[p as usize].name).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaptureBuilder, Format, Key, ProcessKind, SourceInfo};

    fn capture(names: &[&str]) -> Capture {
        let mut b = CaptureBuilder::new();
        for (i, n) in names.iter().enumerate() {
            let s = b.intern(n);
            let p = b.process(Key::Str(s));
            let pr = b.process_mut(p);
            pr.name = s;
            pr.kind = ProcessKind::Host;
            // Created in reverse file order: the sort index decides.
            pr.sort_index = (names.len() - i) as i64;
        }
        b.finish(SourceInfo::default(), Format::XPlane)
    }

    #[test]
    fn first_plane_containing_the_platform() {
        let c = capture(&["/device:GPU:1", "/host:CPU", "/device:GPU:0"]);
        // File order is the reverse of creation here: GPU:0, CPU, GPU:1.
        assert_eq!(default_platform(&c), "gpu");
        let p = plane_for(&c, "GPU").unwrap();
        assert_eq!(c.strings.get(c.processes[p as usize].name), "/device:GPU:0");
        let p = plane_for(&c, "cpu").unwrap();
        assert_eq!(c.strings.get(c.processes[p as usize].name), "/host:CPU");
        assert_eq!(plane_for(&c, "tpu"), None);
        assert_eq!(plane_names(&c)[0], "/device:GPU:0");
        assert_eq!(default_platform(&capture(&["/host:CPU"])), "cpu");
        assert_eq!(default_platform(&capture(&["/device:TPU:3"])), "tpu");
    }
}
