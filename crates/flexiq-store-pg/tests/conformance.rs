//! The shared conformance suite against PostgreSQL: every case runs in its own freshly created
//! schema (random name), dropped afterwards.

use std::sync::{Arc, Mutex};

use flexiq_conformance::Harness;
use flexiq_core::{Result, Store};
use flexiq_store_pg::{PgOptions, PgStore};

fn url() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

struct PgHarness {
    schema: String,
    opened: Mutex<Vec<PgStore>>,
}

async fn make_harness() -> PgHarness {
    let schema = format!("fq_conf_{}", uuid::Uuid::new_v4().simple());
    PgHarness { schema, opened: Mutex::new(Vec::new()) }
}

async fn admin() -> tokio_postgres::Client {
    let (client, conn) =
        tokio_postgres::connect(&url(), tokio_postgres::NoTls).await.expect("connect to postgres");
    tokio::spawn(conn);
    client
}

#[async_trait::async_trait]
impl Harness for PgHarness {
    async fn open(&self, namespace: &str) -> Result<Arc<dyn Store>> {
        let opts = PgOptions {
            namespace: namespace.to_string(),
            schema: self.schema.clone(),
            auto_migrate: true,
            pool_size: 4,
        };
        let store = PgStore::connect(&url(), opts).await?;
        self.opened.lock().unwrap().push(store.clone());
        Ok(Arc::new(store))
    }

    async fn force_contract_floor(&self, level: u32) -> Result<()> {
        PgStore::migrate_schema(&url(), &self.schema).await?;
        let c = admin().await;
        c.execute(
            &format!("UPDATE \"{}\".meta SET value = $1 WHERE key = 'contract_floor'", self.schema),
            &[&i64::from(level)],
        )
        .await
        .expect("write contract floor");
        Ok(())
    }

    async fn cleanup(&self) {
        let stores: Vec<PgStore> = std::mem::take(&mut *self.opened.lock().unwrap());
        for s in stores {
            let _ = s.close().await;
        }
        let c = admin().await;
        c.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.schema))
            .await
            .expect("drop schema");
    }
}

flexiq_conformance::conformance_suite!(make_harness);
