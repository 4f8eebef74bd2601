//! Log dirs in object stores (`gs://`, `s3://`, `az://`, `https://`) through the `object_store`
//! crate: the listing stands in for the directory walk, and each capture is fetched with
//! parallel ranged GETs into a local mirror that the ordinary discovery and loaders read
//! (docs/remote.md). Nothing here parses trace formats.

#[cfg(feature = "cloud")]
pub mod credentials;
#[cfg(feature = "cloud")]
pub mod mirror;

#[cfg(feature = "cloud")]
pub use mirror::{Mirror, SyncReport};

#[cfg(feature = "cloud")]
use object_store::{ObjectStore, path::Path as ObjPath};
#[cfg(feature = "cloud")]
use std::sync::Arc;

/// True when `s` names an object-store location rather than a local path.
pub fn is_url(s: &str) -> bool {
    const SCHEMES: &[&str] = &[
        "s3://", "s3a://", "gs://", "az://", "abfs://", "abfss://", "azure://", "adl://",
        "http://", "https://",
    ];
    let l = s.to_ascii_lowercase();
    SCHEMES.iter().any(|p| l.starts_with(p))
}

#[cfg(feature = "cloud")]
/// An opened object-store location: the store and the prefix (or object) below it.
#[derive(Debug, Clone)]
pub struct Location {
    /// The URL as given.
    pub url: String,
    /// The store.
    pub store: Arc<dyn ObjectStore>,
    /// The key prefix (a "directory") or the key of one object.
    pub prefix: ObjPath,
    /// True for `http(s)://`: plain web servers cannot list (see [`open`]).
    pub http: bool,
}

#[cfg(feature = "cloud")]
/// Opens `url` with credentials as `object_store` reads them from the environment (`AWS_*`,
/// `GOOGLE_*`, `AZURE_*` variables, web identity, container credentials, instance metadata,
/// GCS application-default credentials); for `s3://`, the `AWS_PROFILE` (or default) profile of
/// `~/.aws/credentials` and `~/.aws/config` fills in what the environment does not set.
///
/// `https://` URLs name single files: listing a directory over HTTP needs WebDAV (`PROPFIND`),
/// which plain HTTPS hosting (static sites, signed URLs) does not answer.
pub fn open(url: &str) -> Result<Location, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url}: not a valid URL: {e}"))?;
    let scheme = parsed.scheme().to_ascii_lowercase();
    let key = parsed.path().trim_start_matches('/');
    let bad = |e: object_store::Error| format!("{url}: {e}");
    let (store, prefix, http): (Arc<dyn ObjectStore>, String, bool) = match scheme.as_str() {
        "s3" | "s3a" => {
            use object_store::aws::AmazonS3Builder;
            let mut b = AmazonS3Builder::from_env().with_url(url);
            let env = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
            let p = credentials::aws_profile();
            if !env("AWS_ACCESS_KEY_ID")
                && let (Some(id), Some(secret)) = (p.access_key_id, p.secret_access_key)
            {
                b = b.with_access_key_id(id).with_secret_access_key(secret);
                if let Some(t) = p.session_token {
                    b = b.with_token(t);
                }
            }
            if !env("AWS_REGION")
                && !env("AWS_DEFAULT_REGION")
                && let Some(r) = p.region
            {
                b = b.with_region(r);
            }
            (
                Arc::new(b.build().map_err(bad)?) as Arc<dyn ObjectStore>,
                key.to_string(),
                false,
            )
        }
        "gs" => {
            let b = object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url);
            (
                Arc::new(b.build().map_err(bad)?) as Arc<dyn ObjectStore>,
                key.to_string(),
                false,
            )
        }
        "az" | "abfs" | "abfss" | "azure" | "adl" => {
            let b = object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url);
            // abfs(s)://container@account.dfs.core.windows.net/path: the key is the path.
            (
                Arc::new(b.build().map_err(bad)?) as Arc<dyn ObjectStore>,
                key.to_string(),
                false,
            )
        }
        "http" | "https" => {
            let base = &parsed[..url::Position::BeforePath];
            let b = object_store::http::HttpBuilder::new()
                .with_url(base)
                .with_client_options(
                    object_store::ClientOptions::new().with_allow_http(scheme == "http"),
                );
            (
                Arc::new(b.build().map_err(bad)?) as Arc<dyn ObjectStore>,
                key.to_string(),
                true,
            )
        }
        s => return Err(format!("{url}: unsupported scheme `{s}`")),
    };
    let prefix = ObjPath::parse(prefix.trim_end_matches('/'))
        .map_err(|e| format!("{url}: bad object path: {e}"))?;
    Ok(Location {
        url: url.to_string(),
        store,
        prefix,
        http,
    })
}

#[cfg(feature = "cloud")]
/// A runtime for the store's HTTP clients (two worker threads).
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the network runtime: {e}"))
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
