//! Runs the flexiq conformance suite against a fresh SQLite file (in its own temp dir) per case.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use flexiq_conformance::Harness;
use flexiq_core::{Error, Result, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

struct SqliteHarness {
    dir: Mutex<Option<tempfile::TempDir>>,
    path: PathBuf,
}

#[async_trait::async_trait]
impl Harness for SqliteHarness {
    async fn open(&self, namespace: &str) -> Result<Arc<dyn Store>> {
        let opts = SqliteOptions { namespace: namespace.to_string(), ..Default::default() };
        Ok(Arc::new(SqliteStore::open(&self.path, opts)?))
    }

    async fn force_contract_floor(&self, level: u32) -> Result<()> {
        // Make sure the file carries the schema first; a file already above this build's level
        // refuses to open, which is fine here.
        if let Ok(s) = SqliteStore::open(&self.path, SqliteOptions::default()) {
            s.close().await?;
        }
        let conn = rusqlite::Connection::open(&self.path).map_err(|e| Error::backend(e.to_string()))?;
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(|e| Error::backend(e.to_string()))?;
        conn.execute("UPDATE schema_meta SET contract_floor = ?1 WHERE id = 1", [level])
            .map_err(|e| Error::backend(e.to_string()))?;
        Ok(())
    }

    async fn cleanup(&self) {
        if let Some(dir) = self.dir.lock().unwrap().take() {
            let _ = dir.close();
        }
    }
}

async fn make_harness() -> SqliteHarness {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("conformance.db");
    SqliteHarness { dir: Mutex::new(Some(dir)), path }
}

flexiq_conformance::conformance_suite!(make_harness);
