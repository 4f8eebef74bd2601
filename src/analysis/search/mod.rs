//! Whole-capture search over interned event names: query parsing with prefix filters
//! ([`query`]), fuzzy / regex matching with highlight positions ([`matcher`]), filters resolved
//! per capture ([`filter`]), the per-capture engine with incremental narrowing ([`engine`]) and
//! time-ordered occurrences for jumping ([`occurrences`]), names of one pattern walked as one
//! ([`pattern`]). Query syntax, ranking and measured
//! figures: `docs/search.md`.

pub mod engine;
pub mod filter;
pub mod matcher;
pub mod occurrences;
pub mod pattern;
pub mod query;
pub mod table_filter;

pub use engine::{Hit, Results, SearchEngine};
pub use filter::EventFilter;
pub use matcher::{Matcher, SearchError};
pub use occurrences::{NamePostings, Occurrences, first_occurrences};
pub use pattern::{Occurrence, PatternGroup, first_of_names, pattern_group, pattern_key};
pub use query::{Filter, Mode, Query};
