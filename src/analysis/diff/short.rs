//! HTA-style short names (`hta.utils.utils.shorten_name`): function arguments, template
//! parameters and return types stripped, so `void at::native::foo<float, 4>(int*)` and its
//! other instantiations all read `at::native::foo`.

use std::borrow::Cow;

/// True for names HTA leaves whole (memory copies and sets: `Memcpy …`, `Memset …`, `dma…`).
fn is_memory(name: &str) -> bool {
    name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma")
}

/// The short name of `name`, exactly as HTA's `shorten_name` computes it: `->` removed, every
/// `<…>` and `(…)` group dropped (innermost first, unmatched closers ignored), then the last
/// space-separated word.
pub fn short_name(name: &str) -> Cow<'_, str> {
    if is_memory(name) || (!name.contains('<') && !name.contains('(')) {
        return Cow::Borrowed(name);
    }
    let s = name.replace("->", "");
    let mut stack: Vec<char> = Vec::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '>' | ')' => {
                let open = if ch == '>' { '<' } else { '(' };
                while stack.last().is_some_and(|&t| t != open) {
                    stack.pop();
                }
                if stack.last() == Some(&open) {
                    stack.pop();
                }
            }
            _ => stack.push(ch),
        }
    }
    let joined: String = stack.into_iter().collect();
    Cow::Owned(joined.rsplit(' ').next().unwrap_or("").to_string())
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn strips_like_hta() {
        assert_eq!(short_name("aten::mm"), "aten::mm");
        assert_eq!(
            short_name(
                "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"
            ),
            "at::native::vectorized_elementwise_kernel"
        );
        assert_eq!(
            short_name("Memcpy HtoD (Pageable -> Device)"),
            "Memcpy HtoD (Pageable -> Device)"
        );
        assert_eq!(short_name("f(a->b)"), "f");
        // Unmatched closers are dropped with what they close over (HTA's stack rule).
        assert_eq!(short_name("(x)a)b"), "b");
        assert_eq!(short_name("a)b"), "a)b");
        assert_eq!(short_name("x<y"), "x<y");
    }
}
