//! The SQL of the events triggers that is written by core rather than by hand.
//!
//! Which kind a status change is, and what its data carries, are core's
//! ([`STATUS_EVENT_RULES`], [`status_event_fields`]); the triggers of migration 12 name a change
//! with a `CASE` generated here from that table, so this store cannot name a change otherwise
//! than the others. The migration text holds placeholders that [`render`] fills:
//!
//! - `{EVENT_KIND}`: the kind of the change from old row `o` to new row `n` (NULL when the
//!   status stayed);
//! - `{EVENT_DATA}`: the data object of a status event of kind `c.kind`, from the columns
//!   `c.status`, `c.run_at`, `c.worker_id`, `c.result_size` and `c.error`, nulls left out.
//!
//! A trigger applied by a migration keeps the rules of the build that applied it, so a change
//! to the rules needs a migration that re-creates the trigger functions: the fingerprint test
//! below fails until one is written.

use flexiq_core::events::{status_event_fields, ChangeIs, EventField, EventKind, STATUS_EVENT_RULES};
use flexiq_core::JobStatus;

use crate::row::code;

/// The kind of the change from `o` to `n`, first matching rule first.
pub(crate) fn status_kind_sql() -> String {
    let mut sql = String::from("CASE WHEN n.status = o.status THEN NULL");
    for r in STATUS_EVENT_RULES {
        let mut conds = vec![format!("n.status = {}", code(r.to))];
        if let Some(from) = r.from {
            conds.push(format!("o.status = {}", code(from)));
        }
        match r.when {
            ChangeIs::Any => {}
            ChangeIs::Stalled => conds.push("n.stall_count > o.stall_count".into()),
            ChangeIs::AttemptGivenBack => conds.push("n.attempt < o.attempt".into()),
            ChangeIs::Fresh => conds.push("n.attempt = 0".into()),
        }
        sql.push_str(&format!(" WHEN {} THEN '{}'", conds.join(" AND "), r.kind.as_str()));
    }
    sql.push_str(" END");
    sql
}

/// The stored status code `c.status` as its name.
fn status_name_sql() -> String {
    let mut sql = String::from("CASE c.status");
    for s in JobStatus::ALL {
        sql.push_str(&format!(" WHEN {} THEN '{}'", code(s), s.as_str()));
    }
    sql.push_str(" END");
    sql
}

fn field_sql(f: EventField) -> String {
    match f {
        EventField::Status => status_name_sql(),
        EventField::RunAt => "c.run_at".into(),
        EventField::WorkerId => "c.worker_id".into(),
        EventField::ResultSize => "c.result_size".into(),
        EventField::Error => "c.error".into(),
    }
}

/// The data object of a status event of kind `c.kind`.
pub(crate) fn status_data_sql() -> String {
    let mut sql = String::from("CASE c.kind");
    for kind in EventKind::BUILT_IN {
        let fields = status_event_fields(kind);
        if fields.is_empty() {
            continue;
        }
        let pairs: Vec<String> = fields.iter().map(|f| format!("'{}', {}", f.key(), field_sql(*f))).collect();
        sql.push_str(&format!(
            " WHEN '{}' THEN jsonb_strip_nulls(jsonb_build_object({}))",
            kind.as_str(),
            pairs.join(", ")
        ));
    }
    sql.push_str(" ELSE '{}'::jsonb END");
    sql
}

/// `sql` with the placeholders of this module filled.
pub(crate) fn render(sql: &str) -> String {
    if !sql.contains("{EVENT_") {
        return sql.to_string();
    }
    sql.replace("{EVENT_KIND}", &status_kind_sql()).replace("{EVENT_DATA}", &status_data_sql())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_becomes_one_branch_in_order() {
        let sql = status_kind_sql();
        assert_eq!(sql.matches(" WHEN ").count(), STATUS_EVENT_RULES.len() + 1);
        let stalled = sql.find("'stalled'").unwrap();
        let fresh = sql.find("n.attempt = 0").unwrap();
        let retried = sql.find("'retried'").unwrap();
        assert!(stalled < fresh && fresh < retried, "{sql}");
    }

    #[test]
    fn data_names_each_field_its_kind_carries() {
        let sql = status_data_sql();
        assert!(sql.contains(
            "WHEN 'completed' THEN jsonb_strip_nulls(jsonb_build_object('result_size', c.result_size))"
        ));
        assert!(sql.contains("WHEN 5 THEN 'cancelled'"), "{sql}");
        assert!(!sql.contains("'progress'"), "progress is not a status event: {sql}");
    }

    /// The generated `CASE` names every change as core's `status_event` does, on the server.
    #[tokio::test]
    async fn the_server_names_every_change_as_core_does() {
        use flexiq_core::events::{status_event, StatusChange};

        let url = std::env::var("FLEXIQ_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connect");
        tokio::spawn(conn);
        let mut changes = Vec::new();
        for from in JobStatus::ALL {
            for to in JobStatus::ALL {
                for (before, after) in [(1, 1), (2, 1), (1, 0), (0, 0), (0, 1), (1, 2)] {
                    for stalled in [false, true] {
                        changes.push(StatusChange {
                            from: Some(from),
                            to,
                            attempt_before: before,
                            attempt_after: after,
                            stalled,
                        });
                    }
                }
            }
        }
        let col = |f: fn(&StatusChange) -> i32| changes.iter().map(f).collect::<Vec<i32>>();
        let (os, ns) = (col(|c| i32::from(code(c.from.unwrap()))), col(|c| i32::from(code(c.to))));
        let (oa, na) = (col(|c| c.attempt_before as i32), col(|c| c.attempt_after as i32));
        let stall = col(|c| i32::from(c.stalled));
        let sql = format!(
            "SELECT {} FROM unnest($1::int4[], $2::int4[], $3::int4[], $4::int4[], $5::int4[]) \
               WITH ORDINALITY AS u(os, ns, oa, na, st, i) \
             CROSS JOIN LATERAL (SELECT u.os AS status, u.oa AS attempt, 0 AS stall_count) AS o \
             CROSS JOIN LATERAL (SELECT u.ns AS status, u.na AS attempt, u.st AS stall_count) AS n ORDER BY u.i",
            status_kind_sql()
        );
        let rows = client.query(&sql, &[&os, &ns, &oa, &na, &stall]).await.expect("evaluate the rules");
        assert_eq!(rows.len(), changes.len());
        for (r, c) in rows.iter().zip(&changes) {
            let server: Option<String> = r.get(0);
            assert_eq!(server.as_deref(), status_event(*c).map(|k| k.as_str()), "{c:?}");
        }
    }

    /// Migration 12 created the trigger functions from these rules. When core's rules change,
    /// a schema migrated earlier keeps the old ones: add a migration that re-creates
    /// `events_insert()` and `events_update()` with the placeholders, then record the new
    /// fingerprint here.
    #[test]
    fn the_rules_are_those_migration_12_applied() {
        let rendered = format!("{}\n{}", status_kind_sql(), status_data_sql());
        let print = flexiq_core::cursor::fingerprint(&[&rendered]);
        assert_eq!(print, 6_033_667_449_748_304_734, "rendered trigger rules changed:\n{rendered}");
    }
}
