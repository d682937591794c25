//! Store URLs: which backend a URL names and what to open it with.
//!
//! Parsing is separate from connecting so every form is checked without a server:
//! `sqlite:///abs/path.db`, `sqlite://relative.db`, a bare file path, `postgres://` /
//! `postgresql://` with an optional `?schema=name`, and `redis://` / `rediss://` (one server) or
//! `redis-cluster://` / `rediss-cluster://` (a Redis Cluster, seed nodes as `?node=host:port`)
//! with an optional `?prefix=name`. In-memory SQLite is refused: a worker process could never
//! see it. A query parameter the scheme does not know is refused by name, with the known ones
//! listed: a typo such as `?prefx=app` would otherwise open the default prefix or schema, and
//! a process would read and write another application's jobs.

use std::path::PathBuf;

use flexiq_core::options::validate_name;

use crate::error::{Error, Result};

/// The parameters of a `postgres://` URL: `schema`, then the driver's connection parameters.
const POSTGRES_PARAMS: &[&str] = &[
    "schema",
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "sslmode",
    "sslnegotiation",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];
/// The parameters of a `redis://` or `rediss://` URL.
const REDIS_PARAMS: &[&str] = &["prefix"];
/// The parameters of a `redis-cluster://` or `rediss-cluster://` URL.
const REDIS_CLUSTER_PARAMS: &[&str] = &["prefix", "node"];

/// A parsed store URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// An SQLite database file.
    Sqlite {
        /// The file (absolute or relative to the working directory).
        path: PathBuf,
    },
    /// A PostgreSQL database.
    Postgres {
        /// The connection URL with the `schema` parameter removed.
        url: String,
        /// The schema named by `?schema=`, if any.
        schema: Option<String>,
    },
    /// A Redis (or compatible) server.
    Redis {
        /// The connection URL with the `prefix` parameter removed.
        url: String,
        /// The key prefix named by `?prefix=`, if any.
        prefix: Option<String>,
    },
}

impl StoreUrl {
    /// Parses `url`; an unknown scheme, an empty path or an in-memory SQLite database is
    /// `InvalidArgument`.
    pub fn parse(url: &str) -> Result<Self> {
        let url = url.trim();
        if url.is_empty() {
            return Err(Error::invalid("store url must not be empty"));
        }
        let lower = url.to_ascii_lowercase();
        if let Some(rest) = strip_scheme(url, &lower, "sqlite") {
            return sqlite(url, rest);
        }
        for scheme in ["postgres", "postgresql"] {
            if lower.starts_with(&format!("{scheme}://")) {
                refuse_unknown_params(url, scheme, POSTGRES_PARAMS)?;
                let (base, schema) = take_param(url, "schema")?;
                return Ok(StoreUrl::Postgres { url: base, schema });
            }
        }
        for scheme in ["redis", "rediss", "redis-cluster", "rediss-cluster"] {
            if lower.starts_with(&format!("{scheme}://")) {
                let known = if scheme.ends_with("-cluster") { REDIS_CLUSTER_PARAMS } else { REDIS_PARAMS };
                refuse_unknown_params(url, scheme, known)?;
                let (base, prefix) = take_param(url, "prefix")?;
                return Ok(StoreUrl::Redis { url: base, prefix });
            }
        }
        if let Some((scheme, _)) = url.split_once("://") {
            return Err(Error::invalid(format!(
                "unknown store url scheme {scheme:?} in {url:?} (expected sqlite, postgres, postgresql, redis, rediss, redis-cluster or rediss-cluster)"
            )));
        }
        sqlite(url, url)
    }

    /// The backend's name (`"sqlite"`, `"postgres"`, `"redis"`).
    pub fn backend(&self) -> &'static str {
        match self {
            StoreUrl::Sqlite { .. } => "sqlite",
            StoreUrl::Postgres { .. } => "postgres",
            StoreUrl::Redis { .. } => "redis",
        }
    }
}

/// `sqlite://rest` or `sqlite:rest` -> `rest`.
fn strip_scheme<'a>(url: &'a str, lower: &str, scheme: &str) -> Option<&'a str> {
    let with_slashes = format!("{scheme}://");
    if lower.starts_with(&with_slashes) {
        return Some(&url[with_slashes.len()..]);
    }
    let bare = format!("{scheme}:");
    lower.starts_with(&bare).then(|| &url[bare.len()..])
}

fn sqlite(url: &str, path: &str) -> Result<StoreUrl> {
    let lower = path.to_ascii_lowercase();
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    if path.is_empty() {
        return Err(Error::invalid(format!("sqlite url {url:?} names no file")));
    }
    if lower == ":memory:"
        || lower.starts_with(":memory:")
        || lower.contains("mode=memory")
        || lower == "memory:"
    {
        return Err(Error::invalid(format!(
            "sqlite url {url:?} names an in-memory database, which a worker process cannot share: use a file path"
        )));
    }
    refuse_unknown_params(url, "sqlite", &[])?;
    Ok(StoreUrl::Sqlite { path: PathBuf::from(path) })
}

/// `InvalidArgument` naming the first query parameter of `url` that is not in `known` (the
/// parameters of `scheme`), with the known ones listed.
fn refuse_unknown_params(url: &str, scheme: &str, known: &[&str]) -> Result<()> {
    let Some((_, query)) = url.split_once('?') else { return Ok(()) };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let key = pair.split_once('=').map_or(pair, |(k, _)| k);
        if !known.contains(&key) {
            let expected = if known.is_empty() {
                format!("{scheme} urls take no parameters")
            } else {
                format!("{scheme} urls take {}", known.join(", "))
            };
            return Err(Error::invalid(format!("unknown store url parameter {key:?} ({expected})")));
        }
    }
    Ok(())
}

/// Removes `name=value` from the query string, returning the rest of the URL and the value.
fn take_param(url: &str, name: &str) -> Result<(String, Option<String>)> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), None));
    };
    let mut value = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some((k, v)) if k == name => {
                validate_name(name, v).map_err(Error::from)?;
                value = Some(v.to_string());
            }
            None if pair == name => {
                return Err(Error::invalid(format!("store url parameter {name} needs a value")));
            }
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    Ok((rest, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_forms_name_files() {
        let p = |u: &str| match StoreUrl::parse(u).unwrap() {
            StoreUrl::Sqlite { path } => path,
            other => panic!("{other:?}"),
        };
        assert_eq!(p("sqlite:///abs/path.db"), PathBuf::from("/abs/path.db"));
        assert_eq!(p("sqlite://relative.db"), PathBuf::from("relative.db"));
        assert_eq!(p("sqlite:relative.db"), PathBuf::from("relative.db"));
        assert_eq!(p("jobs.db"), PathBuf::from("jobs.db"));
        assert_eq!(p("/var/lib/q.db"), PathBuf::from("/var/lib/q.db"));
    }

    #[test]
    fn in_memory_and_unknown_schemes_are_refused() {
        for bad in
            [":memory:", "sqlite::memory:", "sqlite://:memory:", "sqlite://file?mode=memory", "", "sqlite://"]
        {
            assert_eq!(StoreUrl::parse(bad).unwrap_err().code(), "INVALID_ARGUMENT", "{bad}");
        }
        let e = StoreUrl::parse("mysql://localhost/db").unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT");
        assert!(e.to_string().contains("mysql"));
    }

    #[test]
    fn server_urls_lose_their_own_parameters() {
        assert_eq!(
            StoreUrl::parse("postgres://u@h/db?schema=jobs&sslmode=disable").unwrap(),
            StoreUrl::Postgres {
                url: "postgres://u@h/db?sslmode=disable".into(),
                schema: Some("jobs".into())
            }
        );
        assert_eq!(
            StoreUrl::parse("postgresql://h/db").unwrap(),
            StoreUrl::Postgres { url: "postgresql://h/db".into(), schema: None }
        );
        assert_eq!(
            StoreUrl::parse("rediss://h:6379/0?prefix=app").unwrap(),
            StoreUrl::Redis { url: "rediss://h:6379/0".into(), prefix: Some("app".into()) }
        );
        assert_eq!(StoreUrl::parse("redis://h").unwrap().backend(), "redis");
        assert_eq!(
            StoreUrl::parse("redis-cluster://a:7000?node=b:7000&prefix=app&node=c:7000").unwrap(),
            StoreUrl::Redis {
                url: "redis-cluster://a:7000?node=b:7000&node=c:7000".into(),
                prefix: Some("app".into())
            }
        );
        assert_eq!(StoreUrl::parse("rediss-cluster://a:7000").unwrap().backend(), "redis");
        assert!(StoreUrl::parse("redis://h?prefix=").is_err());
        assert!(StoreUrl::parse("postgres://h/db?schema").is_err());
    }

    /// The message of the refusal of `url`, checked to be `InvalidArgument`.
    fn refused(url: &str) -> String {
        let e = StoreUrl::parse(url).unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{url}: {e}");
        e.to_string()
    }

    #[test]
    fn unknown_parameters_are_refused_by_name_on_every_scheme() {
        let e = refused("redis://h:6379?prefx=app");
        assert!(e.contains("\"prefx\"") && e.contains("redis urls take prefix"), "{e}");
        let e = refused("rediss://h?prefix=app&db=2");
        assert!(e.contains("\"db\"") && e.contains("prefix"), "{e}");
        let e = refused("redis://h?node=b:7000");
        assert!(e.contains("\"node\""), "{e}");
        let e = refused("redis-cluster://a:7000?node=b:7000&nodes=c:7000");
        assert!(e.contains("\"nodes\"") && e.contains("prefix, node"), "{e}");
        let e = refused("postgres://u@h/db?schma=jobs");
        assert!(e.contains("\"schma\"") && e.contains("schema, user"), "{e}");
        let e = refused("postgresql://h/db?sslmode=disable&tenant=a");
        assert!(e.contains("\"tenant\"") && e.contains("sslmode"), "{e}");
        let e = refused("sqlite:///tmp/q.db?journal=wal");
        assert!(e.contains("\"journal\"") && e.contains("sqlite urls take no parameters"), "{e}");
        assert!(refused("jobs.db?cache=shared").contains("\"cache\""));
        assert!(refused("sqlite://file?mode=memory").contains("in-memory"));
    }

    #[test]
    fn known_parameters_still_open() {
        let pg = "postgres://u@h/db?sslmode=disable&application_name=w&connect_timeout=3&schema=s";
        assert_eq!(StoreUrl::parse(pg).unwrap().backend(), "postgres");
        assert_eq!(
            StoreUrl::parse("redis-cluster://a:7000?node=b:7000&prefix=p").unwrap().backend(),
            "redis"
        );
        assert_eq!(StoreUrl::parse("redis://h?prefix=p").unwrap().backend(), "redis");
    }
}
