//! Log-dir discovery over a generated tree: the input is a list of entries (directory path from
//! a small set of names, file name, kind: file with content, symlink to an ancestor or to a
//! missing target, empty dir), written to a temporary directory; then `discover` and a load of
//! every capture found (with alternates).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tracetui::discover;
use tracetui::formats::Progress;

const DIRS: &[&str] = &[
    "", "plugins", "plugins/profile", "plugins/profile/2024_01_01_00_00_00", "run1",
    "run1/plugins/profile/s1", ".hidden", "a/b/c",
];
const FILES: &[&str] = &[
    "host.xplane.pb",
    "host.xplane.pb.gz",
    "host.trace.json.gz",
    "perfetto_trace.json.gz",
    "w.1.pt.trace.json",
    "w.2.pt.trace.json.gz",
    "trace.json",
    "x.json",
    "x.xplane.riegeli",
    "y.tmp",
    ".z.json",
    "notes.txt",
];

#[derive(Arbitrary, Debug)]
enum Kind {
    File(Vec<u8>),
    LinkUp(u8),
    LinkMissing,
    Dir,
}

#[derive(Arbitrary, Debug)]
struct Entry {
    dir: u8,
    file: u8,
    kind: Kind,
}

fuzz_target!(|entries: Vec<Entry>| {
    let Ok(root) = tempfile::tempdir() else { return };
    for e in entries.iter().take(24) {
        let dir = root.path().join(DIRS[usize::from(e.dir) % DIRS.len()]);
        let _ = std::fs::create_dir_all(&dir);
        let p = dir.join(FILES[usize::from(e.file) % FILES.len()]);
        match &e.kind {
            Kind::File(b) => {
                let _ = std::fs::write(&p, b);
            }
            Kind::LinkUp(n) => {
                let mut t = dir.clone();
                for _ in 0..(n % 4) {
                    if t == root.path() {
                        break; // never above the root: discovery would walk the machine
                    }
                    t.pop();
                }
                let _ = std::os::unix::fs::symlink(&t, &p);
            }
            Kind::LinkMissing => {
                let _ = std::os::unix::fs::symlink(root.path().join("gone"), &p);
            }
            Kind::Dir => {
                let _ = std::fs::create_dir_all(&p);
            }
        }
    }
    let Ok(cat) = discover::discover(root.path()) else { return };
    for c in cat.captures() {
        assert!(c.path.starts_with(root.path()), "{} outside the root", c.path.display());
        let r = c.load_or_alternate(&Progress::default());
        std::hint::black_box(tracetui_fuzz::check(r, usize::MAX));
    }
});
