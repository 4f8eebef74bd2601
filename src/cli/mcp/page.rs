//! Paging of a tool result: `limit` / `offset` over the result's row arrays, then rows cut from
//! the end until the text fits `max_chars` (never a JSON value).

use super::rpc::{DEFAULT_LIMIT, INVALID_PARAMS, RpcError};
use serde_json::{Map, Value, json};

/// `limit` / `offset` / `max_chars` of a call.
pub(super) struct Page {
    pub(super) limit: usize,
    pub(super) offset: usize,
    pub(super) max_chars: usize,
}

impl Page {
    pub(super) fn from_args(args: &Map<String, Value>, max_chars: usize) -> Result<Page, RpcError> {
        let num = |k: &str, d: usize| -> Result<usize, RpcError> {
            match args.get(k) {
                None | Some(Value::Null) => Ok(d),
                Some(v) => v
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| {
                        (
                            INVALID_PARAMS,
                            format!("`{k}` must be a non-negative integer"),
                        )
                    }),
            }
        };
        Ok(Page {
            limit: num("limit", DEFAULT_LIMIT)?,
            offset: num("offset", 0)?,
            max_chars: num("max_chars", max_chars)?.max(1000),
        })
    }

    /// `{"result": value with its row arrays paged, "page": {...}}` as text of at most
    /// `max_chars` characters where cutting rows can make it so.
    pub(super) fn apply(&self, value: Value) -> String {
        let mut full = value;
        let rows: Vec<usize> = row_arrays(&mut full).iter().map(|r| r.len()).collect();
        let total: usize = rows.iter().sum();
        let mut keep = self.limit;
        loop {
            let mut v = full.clone();
            let mut returned = 0;
            for arr in row_arrays(&mut v) {
                let end = arr.len().min(self.offset.saturating_add(keep));
                let start = self.offset.min(end);
                let page: Vec<Value> = arr.drain(..).skip(start).take(end - start).collect();
                returned = returned.max(page.len());
                *arr = page;
            }
            let cut_for_size = keep < self.limit;
            let more = rows.iter().any(|r| *r > self.offset + keep);
            let page = json!({
                "offset": self.offset,
                "limit": self.limit,
                "total": total,
                "rows_per_array": rows,
                "returned_per_array_at_most": returned,
                "cut_for_size": cut_for_size,
                "next_offset": if more { Some(self.offset + keep) } else { None },
            });
            let text =
                serde_json::to_string(&json!({"result": v, "page": page})).unwrap_or_default();
            let returned_now = returned;
            if text.chars().count() <= self.max_chars || keep == 0 {
                return text;
            }
            keep = if keep > returned_now {
                returned_now
            } else {
                keep / 2
            };
            if returned_now == 0 {
                return text;
            }
        }
    }
}

/// The row arrays of a command's JSON: in each capture (or the top object), its longest array.
pub(super) fn row_arrays(v: &mut Value) -> Vec<&mut Vec<Value>> {
    fn longest(o: &mut Map<String, Value>) -> Option<&mut Vec<Value>> {
        o.values_mut()
            .filter_map(|v| v.as_array_mut())
            .max_by_key(|a| a.len())
    }
    let Value::Object(top) = v else {
        return Vec::new();
    };
    if top
        .get("captures")
        .is_some_and(|c| c.as_array().is_some_and(|a| a.iter().all(Value::is_object)))
        && !top.contains_key("path")
    {
        let has_nested = top
            .get("captures")
            .and_then(Value::as_array)
            .is_some_and(|a| {
                a.iter().any(|c| {
                    c.as_object()
                        .is_some_and(|o| o.values().any(Value::is_array))
                })
            });
        if has_nested {
            return top
                .get_mut("captures")
                .and_then(Value::as_array_mut)
                .map(|a| {
                    a.iter_mut()
                        .filter_map(Value::as_object_mut)
                        .filter_map(longest)
                        .collect()
                })
                .unwrap_or_default();
        }
    }
    longest(top).into_iter().collect()
}
