//! Fenced acks followed by a fair claim, in one transaction.
//!
//! In a process running many workflow hosts, some ack while others dequeue at the same moment.
//! Sent apart, the acks pay a transaction (lock flight, then write and durable commit) and the
//! claim another (its own flight and commit). Here the acks' lock flight opens the transaction,
//! their write follows, and the fair claim of the unlimited queues (`workflow_claim_free.rs`)
//! goes out with `COMMIT` in the last flight: one commit and one round trip fewer, and the
//! claim's running counts see the jobs the acks just ended. The commit waits for the WAL flush,
//! as every ack's does.
//!
//! When an eligible queue has limits (or had a moment ago), the statement claims nothing; the
//! acks commit and the claim then takes the transactional path on its own, its error (if any)
//! reported beside the acks' outcomes, since those are already written.

use flexiq_core::store::{AckClaimFairReply, AckClaimFairRequest};
use flexiq_core::Result;

use crate::apply::Effects;
use crate::claim_free::{claimed_from_rows, limited_seen};
use crate::complete::Completes;
use crate::error::pg;
use crate::store::PgStore;

const WHAT: &str = "ack and fair claim";

impl PgStore {
    pub(crate) async fn ack_claim_fair_jobs(&self, req: AckClaimFairRequest) -> Result<AckClaimFairReply> {
        req.validate()?;
        let AckClaimFairRequest { acks, claim } = req;
        let now = claim.now;
        if acks.is_empty() {
            let claimed = self.claim_fair_jobs(claim).await?;
            return Ok(AckClaimFairReply { outcomes: Vec::new(), claimed: Ok(claimed) });
        }
        if self.fair_limited.recent(now) {
            let outcomes = self.ack_jobs(acks, now).await?;
            let claimed = self.claim_fair_jobs(claim).await;
            return Ok(AckClaimFairReply { outcomes, claimed });
        }
        if let Some(completes) = Completes::of(&acks, now)? {
            let (outcomes, claimed) = self.complete_and_claim(acks, completes, claim).await?;
            return Ok(AckClaimFairReply { outcomes, claimed });
        }
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let (outcomes, rows) = c
            .tx_lazy(async {
                let (outcomes, changes) = self.lock_and_judge(&c, acks, now).await?;
                fx.note(&changes);
                self.write(&c, &changes, now, false, false).await?;
                if Self::needs_cascade(&changes) {
                    self.cascade(&c, &changes, now, &mut fx).await?;
                }
                // Prepared, so that it goes out in the claim's flight as one message ahead of it.
                let generic = c.prep(WHAT, crate::db::GENERIC_SETTINGS).await?;
                let generic = async { c.execute(&generic, &[]).await.map(|_| ()).map_err(|e| pg(WHAT, e)) };
                let rows = self.free_flight(&c, &claim, None, generic).await?;
                Ok((outcomes, rows))
            })
            .await?;
        self.announce(&fx);
        if limited_seen(&rows) {
            self.fair_limited.seen(now);
            let claimed = self.claim_fair_locked(claim).await;
            return Ok(AckClaimFairReply { outcomes, claimed });
        }
        let claimed = claimed_from_rows(&rows, now);
        if let Ok(jobs) = &claimed {
            self.announce_claimed(jobs);
        }
        Ok(AckClaimFairReply { outcomes, claimed })
    }
}
