//! Log dirs in object stores (`gs://`, `s3://`, `az://`, `https://`) through the `object_store`
//! crate: the listing stands in for the directory walk, and each capture is fetched with
//! parallel ranged GETs into a local mirror that the ordinary discovery and loaders read
//! (docs/remote.md). Nothing here parses trace formats.

#[cfg(feature = "cloud")]
pub mod credentials;
#[cfg(feature = "cloud")]
pub mod location;
#[cfg(feature = "cloud")]
pub mod mirror;

#[cfg(feature = "cloud")]
pub use location::{Location, open, runtime};
#[cfg(feature = "cloud")]
pub use mirror::{Mirror, SyncReport};

/// True when `s` names an object-store location rather than a local path.
pub fn is_url(s: &str) -> bool {
    const SCHEMES: &[&str] = &[
        "s3://", "s3a://", "gs://", "az://", "abfs://", "abfss://", "azure://", "adl://",
        "http://", "https://",
    ];
    let l = s.to_ascii_lowercase();
    SCHEMES.iter().any(|p| l.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths() {
        assert!(is_url("gs://b/logdir"));
        assert!(is_url("S3://b/x"));
        assert!(is_url("https://host/a.xplane.pb"));
        assert!(is_url("az://container/dir"));
        assert!(!is_url("logs/gs://x"));
        assert!(!is_url("/tmp/s3"));
    }
}
