//! `Events` for [`FaultyStore`](super::FaultyStore). The events stream passes straight through: the
//! campaign reads it as the audit log of every status change.

use flexiq_core::store::{Events, PublishEventRequest, ReadEventsRequest, TrimEventsRequest};
use flexiq_core::{QueueEvent, Result};

use super::FaultyStore;

#[async_trait::async_trait]
impl Events for FaultyStore {
    async fn publish_event(&self, req: PublishEventRequest) -> Result<String> {
        self.inner.publish_event(req).await
    }

    async fn read_events(&self, req: ReadEventsRequest) -> Result<Vec<QueueEvent>> {
        self.inner.read_events(req).await
    }

    async fn last_event_id(&self) -> Result<Option<String>> {
        self.inner.last_event_id().await
    }

    async fn trim_events(&self, req: TrimEventsRequest) -> Result<u64> {
        self.inner.trim_events(req).await
    }

    async fn set_events_enabled(&self, enabled: bool) -> Result<()> {
        self.inner.set_events_enabled(enabled).await
    }

    async fn events_enabled(&self) -> Result<bool> {
        self.inner.events_enabled().await
    }
}
