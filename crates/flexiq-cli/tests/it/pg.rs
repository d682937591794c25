//! The CLI on PostgreSQL, in a schema of its own dropped afterwards.

use crate::stores::{demo_and_ops, unique};

fn pg_url() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

#[tokio::test]
async fn demo_and_ops_on_postgres() {
    let schema = unique("fq_cli_");
    let url = format!("{}?schema={schema}", pg_url());
    let result = std::panic::catch_unwind(|| demo_and_ops(&url));
    let (client, conn) =
        tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls).await.expect("connect to postgres");
    tokio::spawn(conn);
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.expect("drop schema");
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
