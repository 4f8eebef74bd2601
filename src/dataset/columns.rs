//! Column builders of one record batch: dictionary columns keyed by the model's interned ids
//! (no hashing per row), and the JSON text of an args block.

use arrow_array::builder::StringBuilder;
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array};
use std::sync::Arc;

/// A dictionary-encoded string column whose values are identified by a dense `u32` id (a
/// `StrId`, a track or process index): each id's string is added to the batch dictionary once.
#[derive(Debug, Default)]
pub struct DictCol {
    /// Batch key of each id + 1 (0 = not in this batch's dictionary yet).
    map: Vec<u32>,
    touched: Vec<u32>,
    keys: Vec<i32>,
    valid: Vec<bool>,
    nulls: usize,
    values: StringBuilder,
    next: i32,
}

impl DictCol {
    /// Appends the value with id `id`; `text` gives its string the first time in a batch.
    #[inline]
    pub fn push<'s>(&mut self, id: u32, text: impl FnOnce() -> &'s str) {
        let i = id as usize;
        if i >= self.map.len() {
            self.map.resize(i + 1, 0);
        }
        let k = match self.map[i] {
            0 => {
                let k = self.next;
                self.next += 1;
                self.values.append_value(text());
                self.map[i] = k as u32 + 1;
                self.touched.push(id);
                k
            }
            k => (k - 1) as i32,
        };
        self.keys.push(k);
        self.valid.push(true);
    }

    /// Appends a null.
    #[inline]
    pub fn push_null(&mut self) {
        self.keys.push(0);
        self.valid.push(false);
        self.nulls += 1;
    }

    /// The column so far, as an array; the builder starts a new batch.
    pub fn finish(&mut self) -> ArrayRef {
        for &id in &self.touched {
            if let Some(m) = self.map.get_mut(id as usize) {
                *m = 0;
            }
        }
        self.touched.clear();
        self.next = 0;
        let keys = std::mem::take(&mut self.keys);
        let valid = std::mem::take(&mut self.valid);
        let keys = if self.nulls > 0 {
            Int32Array::new(keys.into(), Some(valid.into()))
        } else {
            Int32Array::new(keys.into(), None)
        };
        self.nulls = 0;
        let values = Arc::new(self.values.finish());
        match DictionaryArray::<Int32Type>::try_new(keys, values) {
            Ok(d) => Arc::new(d),
            // Keys are always below the number of values appended: cannot happen.
            Err(e) => panic!("dictionary column: {e}"),
        }
    }
}

/// Appends `s` as a JSON string literal (quotes, backslashes and control characters escaped).
pub fn json_str(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            out.push_str(&format!("\\u{b:04x}"));
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use arrow_array::cast::AsArray;

    #[test]
    fn json_str_escapes_like_serde() {
        for s in ["plain", "q\"b\\s", "nl\nt\tc\u{1}", "ünï€", ""] {
            let mut out = String::new();
            json_str(&mut out, s);
            let back: String = serde_json::from_str(&out).unwrap();
            assert_eq!(back, s);
        }
    }

    #[test]
    fn dict_col_reuses_keys_and_resets_per_batch() {
        let mut d = DictCol::default();
        let names = ["a", "b", "c"];
        for id in [2u32, 0, 2, 1] {
            d.push(id, || names[id as usize]);
        }
        d.push_null();
        let a = d.finish();
        let dict = a.as_dictionary::<Int32Type>();
        assert_eq!(dict.values().len(), 3);
        let vals = dict.values().as_string::<i32>();
        let got: Vec<Option<&str>> = (0..dict.len())
            .map(|i| {
                dict.is_valid(i)
                    .then(|| vals.value(dict.keys().value(i) as usize))
            })
            .collect();
        assert_eq!(got, [Some("c"), Some("a"), Some("c"), Some("b"), None]);
        d.push(1, || "b");
        let a = d.finish();
        assert_eq!(a.as_dictionary::<Int32Type>().values().len(), 1);
    }
}
