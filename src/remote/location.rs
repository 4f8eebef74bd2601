//! An opened object-store location (`open`: URL → store + prefix, credentials as `object_store`
//! and the AWS profile files give them) and the runtime its HTTP clients run on.

use super::credentials;
use object_store::{ObjectStore, path::Path as ObjPath};
use std::sync::Arc;

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

/// A runtime for the store's HTTP clients (two worker threads).
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the network runtime: {e}"))
}
