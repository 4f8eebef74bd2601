//! The default AWS profile from `~/.aws/credentials` and `~/.aws/config`, which the
//! `object_store` crate does not read (it reads `AWS_*` variables, web identity, container
//! credentials and instance metadata).

use std::path::PathBuf;

/// Keys of one AWS profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AwsProfile {
    /// `aws_access_key_id`.
    pub access_key_id: Option<String>,
    /// `aws_secret_access_key`.
    pub secret_access_key: Option<String>,
    /// `aws_session_token`.
    pub session_token: Option<String>,
    /// `region` (from `config`, or `credentials`).
    pub region: Option<String>,
}

/// The values of `[section]` in INI text (`key = value` lines; `#`/`;` comments).
pub fn ini_section(text: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            inside = name.trim() == section;
            continue;
        }
        if inside && let Some((k, v)) = l.split_once('=') {
            out.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    out
}

fn aws_file(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".aws").join(name))
}

/// The profile named by `AWS_PROFILE` (else `default`) from `AWS_SHARED_CREDENTIALS_FILE`
/// (else `~/.aws/credentials`) and `AWS_CONFIG_FILE` (else `~/.aws/config`, section
/// `[profile NAME]`, or `[default]`).
pub fn aws_profile() -> AwsProfile {
    let name = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
    let mut p = AwsProfile::default();
    let mut take = |kv: Vec<(String, String)>| {
        for (k, v) in kv {
            let slot = match k.as_str() {
                "aws_access_key_id" => &mut p.access_key_id,
                "aws_secret_access_key" => &mut p.secret_access_key,
                "aws_session_token" => &mut p.session_token,
                "region" => &mut p.region,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(v);
            }
        }
    };
    if let Some(text) = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials")
        .and_then(|f| std::fs::read_to_string(f).ok())
    {
        take(ini_section(&text, &name));
    }
    if let Some(text) =
        aws_file("AWS_CONFIG_FILE", "config").and_then(|f| std::fs::read_to_string(f).ok())
    {
        let section = if name == "default" {
            "default".to_string()
        } else {
            format!("profile {name}")
        };
        take(ini_section(&text, &section));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_one_section() {
        let t = "[default]\naws_access_key_id = AK\n# c\naws_secret_access_key=SK\n\
                 [profile other]\nregion = eu-west-1\n[x]\nregion=us\n";
        assert_eq!(
            ini_section(t, "default"),
            [
                ("aws_access_key_id".to_string(), "AK".to_string()),
                ("aws_secret_access_key".to_string(), "SK".to_string())
            ]
        );
        assert_eq!(
            ini_section(t, "profile other"),
            [("region".to_string(), "eu-west-1".to_string())]
        );
        assert!(ini_section(t, "missing").is_empty());
    }
}
