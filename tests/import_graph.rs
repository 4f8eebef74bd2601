//! The file-level import graph of `src/`: no file in the checked folders (the loaders and the
//! model) imports a file that imports it, directly or around a longer circle (the loader stages run one way, see
//! docs/architecture.md, "Loader stages").
//!
//! Edges come from `use` trees and from paths written inline (`crate::a::b`, `super::x`,
//! `self::x`, or a child module's name), each resolved to the file of its longest module
//! prefix. A `mod x;` declaration is not an import; a `pub use` re-export is (it names the file).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folders whose files must not sit on an import circle.
const CHECKED: &[&str] = &["formats/", "model/"];

type Module = Vec<String>;

fn files(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read src dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).expect("under src").with_extension("");
            let mut m: Module = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                m.pop();
            }
            out.insert(m, p);
        }
    }
    out
}

/// The text without comments, string and char literals (so paths inside them do not count).
fn strip(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &s[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |k| k + 2);
        } else if let Some(n) = raw_string_len(rest) {
            out.push_str("\"\"");
            i += n;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if b[i] == b'\'' && char_literal_len(&b[i..]).is_some() {
            out.push_str("' '");
            i += char_literal_len(&b[i..]).unwrap_or(1);
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Length of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) at the start of `s`.
fn raw_string_len(s: &str) -> Option<usize> {
    let t = s.strip_prefix('b').unwrap_or(s);
    let prefix = s.len() - t.len();
    let t = t.strip_prefix('r')?;
    let hashes = t.len() - t.trim_start_matches('#').len();
    let body = t[hashes..].strip_prefix('"')?;
    let end = format!("\"{}", "#".repeat(hashes));
    let k = body.find(&end)?;
    Some(prefix + 1 + hashes + 1 + k + end.len())
}

/// Length of a char literal (`'a'`, `'\n'`, `'\u{1F}'`) at the start of `b`; `None` for a
/// lifetime.
fn char_literal_len(b: &[u8]) -> Option<usize> {
    if b.get(1) == Some(&b'\\') {
        let k = b.iter().skip(2).position(|&c| c == b'\'')?;
        return Some(k + 3);
    }
    let s = std::str::from_utf8(&b[1..b.len().min(6)]).ok()?;
    let c = s.chars().next()?;
    (b.get(1 + c.len_utf8()) == Some(&b'\'')).then_some(c.len_utf8() + 2)
}

/// Every path named by a `use` tree (`a::{b, c::{d}}` → `a::b`, `a::c::d`).
fn expand(tree: &str) -> Vec<Vec<String>> {
    // `x as y` keeps `x`: mark the rename before whitespace goes.
    let words: Vec<&str> = tree.split_whitespace().collect();
    let t: String = words
        .iter()
        .map(|w| if *w == "as" { "@" } else { w })
        .collect();
    let mut out = Vec::new();
    expand_into(&[], &t, &mut out);
    out
}

fn expand_into(prefix: &[String], t: &str, out: &mut Vec<Vec<String>>) {
    for part in split_top(t) {
        match part.find('{') {
            Some(i) => {
                let mut p = prefix.to_vec();
                p.extend(segments(&part[..i]));
                let inner = part[i + 1..].strip_suffix('}').unwrap_or(&part[i + 1..]);
                expand_into(&p, inner, out);
            }
            None => {
                let mut p = prefix.to_vec();
                p.extend(segments(part));
                out.push(p);
            }
        }
    }
}

fn segments(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split("::")
        .filter(|x| !x.is_empty())
        .map(|x| x.split('@').next().unwrap_or(x).to_string())
}

fn split_top(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < s.len() {
        parts.push(&s[start..]);
    }
    parts
}

/// Depth of inline `mod x { … }` blocks enclosing each byte offset of `s`.
fn inline_depths(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut depth = vec![0u8; b.len() + 1];
    let mut stack: Vec<(bool, u8)> = Vec::new();
    let mut cur = 0u8;
    let mut i = 0;
    while i < b.len() {
        depth[i] = cur;
        match b[i] {
            b'{' => {
                let before = s[..i].trim_end();
                let is_mod = before
                    .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .nth(1)
                    .is_some_and(|w| w == "mod");
                stack.push((is_mod, cur));
                if is_mod {
                    cur += 1;
                }
            }
            b'}' => {
                if let Some((_, d)) = stack.pop() {
                    cur = d;
                }
            }
            _ => {}
        }
        i += 1;
    }
    depth
}

fn resolve(
    files: &BTreeMap<Module, PathBuf>,
    module: &Module,
    children: &BTreeSet<String>,
    inline: u8,
    path: &[String],
) -> Option<Module> {
    let first = path.first()?;
    let mut base = module.clone();
    let mut rest = path;
    match first.as_str() {
        "crate" => {
            base.clear();
            rest = &path[1..];
        }
        "super" | "self" => {
            // `super` inside an inline module first leaves that module (same file).
            let mut skip = inline;
            while let Some(seg) = rest.first() {
                match seg.as_str() {
                    "super" if skip > 0 => skip -= 1,
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        c if children.contains(c) && inline == 0 => {}
        _ => return None,
    }
    let mut full = base;
    full.extend(rest.iter().cloned());
    (0..=full.len())
        .rev()
        .map(|k| full[..k].to_vec())
        .find(|m| files.contains_key(m))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn edges(files: &BTreeMap<Module, PathBuf>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut out = BTreeMap::new();
    for (module, path) in files {
        let text = strip(&std::fs::read_to_string(path).expect("read source"));
        let depths = inline_depths(&text);
        let mut children = BTreeSet::new();
        let mut deps = BTreeSet::new();
        for (i, _) in text.match_indices("mod ") {
            if i > 0 && text[..i].ends_with(is_ident) {
                continue;
            }
            let name: String = text[i + 4..].chars().take_while(|&c| is_ident(c)).collect();
            if text[i + 4 + name.len()..].trim_start().starts_with(';') {
                children.insert(name);
            }
        }
        let mut add = |p: &[String], at: usize| {
            let d = depths.get(at).copied().unwrap_or(0);
            if let Some(m) = resolve(files, module, &children, d, p)
                && &m != module
            {
                deps.insert(m);
            }
        };
        for (i, _) in text.match_indices("use ") {
            if i > 0 && text[..i].ends_with(is_ident) {
                continue;
            }
            let Some(end) = text[i..].find(';') else {
                continue;
            };
            for p in expand(&text[i + 4..i + end]) {
                add(&p, i);
            }
        }
        // Inline paths: an identifier followed by `::`, not itself preceded by `::`.
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let starts = is_ident(b[i] as char)
                && (i == 0 || !(is_ident(b[i - 1] as char) || b[i - 1] == b':'));
            if !starts {
                i += 1;
                continue;
            }
            let mut j = i;
            let mut segs = Vec::new();
            loop {
                let k = j + text[j..].chars().take_while(|&c| is_ident(c)).count();
                if k == j {
                    break;
                }
                segs.push(text[j..k].to_string());
                if text[k..].starts_with("::") {
                    j = k + 2;
                } else {
                    j = k;
                    break;
                }
            }
            if segs.len() > 1 {
                add(&segs, i);
            }
            i = j.max(i + 1);
        }
        out.insert(module.clone(), deps);
    }
    out
}

/// Strongly connected components with more than one file (Tarjan).
fn circles(g: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct T<'a> {
        g: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a Module) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            let g = self.g;
            for w in g.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    comp.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out
}

fn name(files: &BTreeMap<Module, PathBuf>, src: &Path, m: &Module) -> String {
    files[m].strip_prefix(src).map_or_else(
        |_| files[m].display().to_string(),
        |p| p.display().to_string(),
    )
}

#[test]
fn no_import_circle_in_formats_and_model() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = files(&src);
    let g = edges(&files);
    // The resolver sees the edges it should: a known chain of the JSON loader's stages.
    let m = |p: &str| -> Module { p.split('/').map(str::to_string).collect() };
    assert!(g[&m("formats/chrome/scan")].contains(&m("formats/chrome/apply")));
    assert!(g[&m("formats/chrome/load")].contains(&m("formats/chrome/chunks")));
    let bad: Vec<String> = circles(&g)
        .into_iter()
        .filter(|c| {
            c.iter()
                .any(|f| CHECKED.iter().any(|d| name(&files, &src, f).starts_with(d)))
        })
        .map(|c| {
            let mut names: Vec<String> = c.iter().map(|f| name(&files, &src, f)).collect();
            names.sort();
            names.join(" ⇄ ")
        })
        .collect();
    assert!(bad.is_empty(), "import circles: {bad:#?}");
}

#[test]
fn the_checker_finds_a_circle() {
    // Two files importing each other, one through a `use` tree, one through an inline path.
    let dir = std::env::temp_dir().join(format!("tracetui-imports-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).expect("mkdir");
    std::fs::write(dir.join("a/mod.rs"), "mod x;\nmod y;\n").expect("write");
    std::fs::write(dir.join("a/x.rs"), "use super::{y::Y, z};\npub struct X;\n").expect("write");
    std::fs::write(
        dir.join("a/y.rs"),
        "// crate::a::q::Q in a comment is no import\npub struct Y(crate::a::x::X);\n",
    )
    .expect("write");
    let files = files(&dir);
    let c = circles(&edges(&files));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].len(), 2);
}
